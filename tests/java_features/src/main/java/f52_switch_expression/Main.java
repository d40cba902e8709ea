// JLS 15.28: calls in switch expression arms
package f52_switch_expression;

class Main {
    int small() { return 1; }
    int big() { return 9; }
    int run(int k) { return switch (k) { case 0 -> small(); default -> big(); }; }
}
