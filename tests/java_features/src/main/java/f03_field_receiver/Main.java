// JLS 15.11.1, 15.12: the field's declared type
package f03_field_receiver;

class Engine { void start() {} }
class Main {
    private final Engine engine = new Engine();
    void run() { engine.start(); }
}
