// JLS 8.5.1: a static member class by its qualified name
package f20_static_nested_class;

class Main {
    static class Config { static Config defaults() { return new Config(); } void apply() {} }
    void run() { Config.defaults().apply(); }
}
