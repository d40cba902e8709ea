// JLS 15.12.3: a chain of methods returning their own class
package f42_builder_returns_this;

class Builder {
    Builder name(String n) { return this; }
    Builder size(int s) { return this; }
    String build() { return ""; }
}
class Main {
    String run() { return new Builder().name("x").size(2).build(); }
}
