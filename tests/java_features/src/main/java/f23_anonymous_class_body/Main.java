// JLS 15.9.5: an anonymous class's methods call the enclosing method's names
package f23_anonymous_class_body;

class Main {
    void tick() {}
    Runnable run() {
        return new Runnable() { public void run() { tick(); } };
    }
}
