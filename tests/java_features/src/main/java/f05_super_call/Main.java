// JLS 15.12.1: super.m() names the superclass's method
package f05_super_call;

class Base { void greet() {} }
class Main extends Base {
    @Override void greet() { super.greet(); }
}
