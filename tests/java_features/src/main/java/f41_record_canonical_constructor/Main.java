// JLS 8.10.4: a record's canonical constructor
package f41_record_canonical_constructor;

record Pair(String a, String b) {
    Pair { check(a); }
    static void check(String s) {}
}
class Main {
    Pair run() { return new Pair("a", "b"); }
}
