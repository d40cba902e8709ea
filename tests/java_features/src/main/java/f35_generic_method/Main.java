// JLS 8.4.4: a generic method; its type argument inferred
package f35_generic_method;

class Main {
    static <T> T first(T a, T b) { return a; }
    String run() { return first("a", "b"); }
}
