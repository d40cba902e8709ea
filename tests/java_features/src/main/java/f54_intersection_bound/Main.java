// JLS 4.9: members of every bound of an intersection type
package f54_intersection_bound;

interface Sized { int size(); }
class Shelf { void dust() {} }
class Main<T extends Shelf & Sized> {
    void run(T t) { t.dust(); t.size(); }
}
