// JLS 14.30.1, 15.20.2: a pattern variable of instanceof
package f50_instanceof_pattern;

class Cat { void purr() {} }
class Main {
    void run(Object o) { if (o instanceof Cat c) { c.purr(); } }
}
