// JLS 15.9.3: constructor overloads by argument type
package f61_overloaded_constructor;

class Amount {
    Amount(int cents) {}
    Amount(String text) {}
}
class Main {
    Amount run() { return new Amount("1.00"); }
}
