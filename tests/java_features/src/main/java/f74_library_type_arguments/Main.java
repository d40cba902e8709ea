// JLS 4.5 (library layer): a JDK class's type arguments, Map.Entry<String, Item>'s getValue() an Item
package f74_library_type_arguments;

import java.util.List;
import java.util.Map;
import java.util.Optional;

class Item {
    String name() { return "item"; }
}

public class Main {
    void run(Map<String, Item> byName, List<Item> items) {
        for (Map.Entry<String, Item> entry : byName.entrySet()) {
            entry.getValue().name();
        }
        items.get(0).name();
        Optional<Item> first = Optional.ofNullable(items.get(0));
        first.get().name();
    }
}
