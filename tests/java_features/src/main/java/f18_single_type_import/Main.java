// JLS 7.5.1: single-type-import of another package's class
package f18_single_type_import;

import f18_single_type_import.model.Order;

class Main {
    void run(Order order) { order.ship(); }
}
