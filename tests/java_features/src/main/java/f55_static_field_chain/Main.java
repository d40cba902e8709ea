// JLS 15.11.1: a static field's type as the receiver
package f55_static_field_chain;

class Registry { static final Registry INSTANCE = new Registry(); void register() {} }
class Main {
    void run() { Registry.INSTANCE.register(); }
}
