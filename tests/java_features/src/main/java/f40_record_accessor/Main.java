// JLS 8.10.3: a record component's implicitly declared accessor
package f40_record_accessor;

record Money(int cents) {}
class Main {
    int run(Money m) { return m.cents(); }
}
