// JLS 4.5, 8.1.2: a method returning a type variable returns the type argument the receiver's class passes (B extends Base<T, B>)
package f71_self_typed_builder;

abstract class Base<T, B extends Base<T, B>> {
    B name(String n) { return self(); }
    abstract B self();
}
class Widget {}
class WidgetBuilder extends Base<Widget, WidgetBuilder> {
    WidgetBuilder self() { return this; }
    WidgetBuilder color(String c) { return this; }
}
class Main {
    void run() { new WidgetBuilder().name("a").color("red"); }
}
