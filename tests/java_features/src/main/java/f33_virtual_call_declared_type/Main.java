// JLS 15.12.3: the compile-time declaration is the declared type's method
package f33_virtual_call_declared_type;

class Shape { double area() { return 0; } }
class Square extends Shape { @Override double area() { return 1; } }
class Main {
    double run() { Shape s = new Square(); return s.area(); }
}
