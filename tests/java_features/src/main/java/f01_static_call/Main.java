// JLS 15.12.1: a simple method name in the class that declares it
package f01_static_call;

class Main {
    static int twice(int x) { return x * 2; }
    int run() { return twice(3); }
}
