// JLS 14.14.2: the enhanced for variable's declared type
package f51_enhanced_for_array;

class Task { void done() {} }
class Main {
    void run(Task[] tasks) { for (Task t : tasks) { t.done(); } }
}
