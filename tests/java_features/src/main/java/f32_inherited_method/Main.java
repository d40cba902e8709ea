// JLS 8.4.8: members inherited from the superclass
package f32_inherited_method;

class Animal { void eat() {} }
class Dog extends Animal {}
class Main {
    void run(Dog dog) { dog.eat(); }
}
