// JLS 15.12.2.1: potentially applicable methods by arity
package f10_overload_arity;

class Main {
    void log(String a) {}
    void log(String a, String b) {}
    void run() { log("x", "y"); }
}
