// JLS 7.5.4: static-import-on-demand
package f17_static_import_on_demand;

import static f17_static_import_on_demand.util.Maths.*;

class Main {
    int run() { return cube(2); }
}
