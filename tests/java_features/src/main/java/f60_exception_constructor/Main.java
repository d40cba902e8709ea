// JLS 14.18, 15.9: throw new E(...)
package f60_exception_constructor;

class BadInput extends RuntimeException { BadInput(String m) { super(m); } }
class Main {
    void run() { throw new BadInput("no"); }
}
