// JLS 5.1.2: char to int widening chooses the int overload
package f64_char_widens_to_int;

class Main {
    void code(int c) {}
    void code(String s) {}
    void run() { code('a'); }
}
