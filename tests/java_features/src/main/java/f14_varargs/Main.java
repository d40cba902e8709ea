// JLS 15.12.2.4: variable arity invocation in phase 3
package f14_varargs;

class Main {
    int sum(int... xs) { return xs.length; }
    int run() { return sum(1, 2, 3); }
}
