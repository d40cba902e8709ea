// JLS 8.1.2: a generic class's method through a parameterized type
package f67_generic_class_method;

class Holder<T> { T get() { return null; } void set(T t) {} }
class Main {
    void run(Holder<String> h) { h.set("x"); }
}
