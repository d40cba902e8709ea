// JLS 14.3: a local class declared in a block
package f22_local_class;

class Main {
    int run() {
        class Step { int go() { return 1; } }
        return new Step().go();
    }
}
