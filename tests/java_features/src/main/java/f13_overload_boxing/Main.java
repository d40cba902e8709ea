// JLS 5.1.7, 15.12.2.3: boxing only in phase 2
package f13_overload_boxing;

class Main {
    void keep(Integer x) {}
    void keep(String s) {}
    void run() { keep(5); }
}
