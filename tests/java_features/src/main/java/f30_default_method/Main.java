// JLS 9.4: a default method of an interface
package f30_default_method;

interface Named { default String label() { return "x"; } }
class Item implements Named {}
class Main {
    String run(Item item) { return item.label(); }
}
