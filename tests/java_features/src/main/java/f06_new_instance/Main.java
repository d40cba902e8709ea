// JLS 15.9: class instance creation runs the constructor
package f06_new_instance;

class Point { Point(int x, int y) {} }
class Main {
    Point run() { return new Point(1, 2); }
}
