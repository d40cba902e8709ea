// JLS 8.8.7.1: this(...) invokes another constructor of the class
package f07_this_constructor;

class Main {
    Main() { this(0); }
    Main(int size) {}
}
