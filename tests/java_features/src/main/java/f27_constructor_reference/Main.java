// JLS 15.13: ClassType::new
package f27_constructor_reference;

import java.util.function.Supplier;

class Box { Box() {} }
class Main {
    Supplier<Box> run() { return Box::new; }
}
