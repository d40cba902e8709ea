// JLS 9.4, 15.12.3: an interface's abstract method through a variable of that type
package f53_interface_typed_variable;

interface Sink { void accept(String s); }
class Main {
    void run(Sink sink) { sink.accept("x"); }
}
