// JLS 8.9.2: a method of an enum through a constant
package f38_enum_instance_method;

enum Color { RED; String hex() { return "#f00"; } }
class Main {
    String run() { return Color.RED.hex(); }
}
