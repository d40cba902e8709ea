// JLS 6.5.5.2: a fully qualified type name
package f59_fully_qualified_name;

class Main {
    int run() { return f59_fully_qualified_name.util.Tools.version(); }
}
