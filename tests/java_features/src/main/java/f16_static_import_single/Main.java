// JLS 7.5.3: single-static-import
package f16_static_import_single;

import static f16_static_import_single.util.Maths.square;

class Main {
    int run() { return square(4); }
}
