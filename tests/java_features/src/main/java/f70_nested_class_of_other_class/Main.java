// JLS 6.5.5.2: Outer.Inner of another class
package f70_nested_class_of_other_class;

class Outer { static class Inner { Inner() {} void ping() {} } }
class Main {
    void run() { new Outer.Inner().ping(); }
}
