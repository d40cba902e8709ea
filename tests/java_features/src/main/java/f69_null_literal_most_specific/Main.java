// JLS 15.12.2.5: null chooses the most specific applicable method
package f69_null_literal_most_specific;

class Main {
    void take(Object o) {}
    void take(String s) {}
    void run() { take(null); }
}
