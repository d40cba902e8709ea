// JLS 8.8.7: a constructor body without this()/super() begins with super()
package f09_implicit_super;

class Base { Base() {} }
class Main extends Base {
    Main(int x) {}
}
