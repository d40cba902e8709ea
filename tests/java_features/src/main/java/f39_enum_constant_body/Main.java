// JLS 8.9.1: a constant's class body overrides the enum's method
package f39_enum_constant_body;

enum Op {
    PLUS { int apply(int a, int b) { return add(a, b); } };
    abstract int apply(int a, int b);
    static int add(int a, int b) { return a + b; }
}
