// JLS 6.4.1: a local variable shadows a field of another type
package f57_local_shadows_field;

class Pen { void write() {} }
class Pencil { void write() {} }
class Main {
    Pen tool = new Pen();
    void run() { Pencil tool = new Pencil(); tool.write(); }
}
