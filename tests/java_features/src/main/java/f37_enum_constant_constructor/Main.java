// JLS 8.9.2: each enum constant runs the enum's constructor
package f37_enum_constant_constructor;

enum Level {
    LOW(1), HIGH(9);
    Level(int weight) {}
}
