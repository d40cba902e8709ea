// JLS 8.6: an instance initializer's calls
package f45_instance_initializer;

class Main {
    int size;
    int compute() { return 2; }
    { size = compute(); }
}
