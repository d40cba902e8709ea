// JLS 4.5, 8.4.8: an inherited method's type-variable return is the superclass's type argument
package f72_type_argument_return;

class Box<T> {
    T value;
    T get() { return value; }
}
class Apple { void bite() {} }
class AppleBox extends Box<Apple> {}
class Crate extends AppleBox {
    void open() { get().bite(); }
}
class Main {
    void run(AppleBox box) { box.get().bite(); }
}
