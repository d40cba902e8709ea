// JLS 8.4.3.1: an abstract method is the compile-time declaration
package f34_abstract_method;

abstract class Store { abstract void save(); }
class Main {
    void run(Store store) { store.save(); }
}
