// JLS 15.8.4: Outer.this names the enclosing instance
package f66_outer_this_qualified;

class Main {
    void reset() {}
    class Button { void press() { Main.this.reset(); } }
}
