// JLS 15.10.3: an array access's component type
package f49_array_element_receiver;

class Cell { void clear() {} }
class Main {
    void run(Cell[] cells) { cells[0].clear(); }
}
