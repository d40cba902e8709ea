// JLS 4.4: a type variable's members are its bound's
package f36_type_variable_bound;

class Animal { void sleep() {} }
class Main<T extends Animal> {
    T pet;
    void run() { pet.sleep(); }
}
