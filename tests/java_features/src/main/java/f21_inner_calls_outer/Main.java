// JLS 15.12.1: a method of an enclosing class from an inner class
package f21_inner_calls_outer;

class Main {
    void refresh() {}
    class Listener { void fire() { refresh(); } }
}
