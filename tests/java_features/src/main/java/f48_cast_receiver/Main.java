// JLS 15.16: a cast expression's type
package f48_cast_receiver;

class Door { void open() {} }
class Main {
    void run(Object o) { ((Door) o).open(); }
}
