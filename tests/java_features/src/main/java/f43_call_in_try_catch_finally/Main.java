// JLS 14.20: calls in try, catch and finally blocks
package f43_call_in_try_catch_finally;

class Main {
    void open() {}
    void recover() {}
    void close() {}
    void run() {
        try { open(); } catch (RuntimeException e) { recover(); } finally { close(); }
    }
}
