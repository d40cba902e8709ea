// JLS 8.3.2: a field initializer's calls
package f46_field_initializer;

class Main {
    static int defaultSize() { return 4; }
    int size = defaultSize();
}
