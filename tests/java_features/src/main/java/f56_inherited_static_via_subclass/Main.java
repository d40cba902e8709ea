// JLS 8.4.8: a static method inherited, named through the subclass
package f56_inherited_static_via_subclass;

class Base { static Base make() { return null; } }
class Sub extends Base {}
class Main {
    Base run() { return Sub.make(); }
}
