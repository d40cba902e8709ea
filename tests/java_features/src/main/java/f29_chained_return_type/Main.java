// JLS 15.12.3: a call's type is its method's return type
package f29_chained_return_type;

class Wheel { void spin() {} }
class Car { Wheel wheel() { return new Wheel(); } }
class Main {
    void run(Car car) { car.wheel().spin(); }
}
