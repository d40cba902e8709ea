// JLS 15.27.2: a lambda body's calls
package f25_lambda_body;

class Main {
    void work() {}
    Runnable run() { return () -> work(); }
}
