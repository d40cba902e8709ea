// JLS 15.13: expression::method
package f28_bound_method_reference;

import java.util.function.Supplier;

class Clock { long now() { return 0; } }
class Main {
    Supplier<Long> run(Clock clock) { return clock::now; }
}
