// JLS 15.9.5.1: an anonymous class's constructor invokes its superclass's
package f24_anonymous_superclass_constructor;

abstract class Task { Task(String name) {} abstract void go(); }
class Main {
    Task run() { return new Task("t") { void go() {} }; }
}
