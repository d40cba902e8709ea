// JLS 8.7: a static initializer's calls belong to the class
package f44_static_initializer;

class Main {
    static int seed;
    static int load() { return 1; }
    static { seed = load(); }
}
