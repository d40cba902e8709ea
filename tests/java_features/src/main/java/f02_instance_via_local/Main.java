// JLS 15.12.1, 15.12.3: a method of the local variable's declared type
package f02_instance_via_local;

class Counter { int n; void inc() { n++; } }
class Main {
    void run() { Counter c = new Counter(); c.inc(); }
}
