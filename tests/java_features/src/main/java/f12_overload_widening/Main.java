// JLS 5.1.2, 15.12.2.2: widening primitive conversion in phase 1
package f12_overload_widening;

class Main {
    void size(long x) {}
    void size(String s) {}
    void run() { int n = 3; size(n); }
}
