// JLS 15.12.2.5: the most specific method (String over Object)
package f15_most_specific;

class Main {
    void show(Object o) {}
    void show(String s) {}
    void run() { show("text"); }
}
