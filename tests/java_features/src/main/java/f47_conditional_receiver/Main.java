// JLS 15.25: a conditional expression's type as the receiver
package f47_conditional_receiver;

class Lamp { void on() {} }
class Main {
    void run(boolean b, Lamp x, Lamp y) { (b ? x : y).on(); }
}
