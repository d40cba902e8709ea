// JLS 15.12.2.2: applicable by strict invocation
package f11_overload_type;

class Main {
    void put(int x) {}
    void put(String s) {}
    void run() { put("s"); put(1); }
}
