// JLS 9.4, 15.12.1: an interface's static method by the interface's name
package f31_interface_static_method;

interface Parser { static Parser create() { return null; } }
class Main {
    Parser run() { return Parser.create(); }
}
