// JLS 8.8.7.1: super(...) invokes the superclass's constructor
package f08_super_constructor;

class Base { Base(String name) {} }
class Main extends Base {
    Main() { super("main"); }
}
