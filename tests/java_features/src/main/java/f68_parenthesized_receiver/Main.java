// JLS 15.8.5: a parenthesized expression
package f68_parenthesized_receiver;

class Fan { void spin() {} }
class Main {
    void run(Fan fan) { (fan).spin(); }
}
