// JLS 4.5: the type arguments a variable is declared with say what its class's methods return
package f73_declared_type_arguments;

class Item {
    String name() { return "item"; }
}

class Box<T> {
    private final T value;
    Box(T value) { this.value = value; }
    T get() { return value; }
}

class Pair<A, B> {
    private final A first;
    private final B second;
    Pair(A first, B second) { this.first = first; this.second = second; }
    B second() { return second; }
}

public class Main {
    static Box<Item> kept = new Box<>(new Item());

    void run(Box<Item> given) {
        Box<Item> local = new Box<>(new Item());
        local.get().name();
        given.get().name();
        kept.get().name();
        Pair<String, Item> pair = new Pair<>("x", new Item());
        pair.second().name();
    }
}
