// JLS 15.13: ClassName::staticMethod
package f26_static_method_reference;

import java.util.function.IntUnaryOperator;

class Main {
    static int inc(int x) { return x + 1; }
    IntUnaryOperator run() { return Main::inc; }
}
