// JLS 15.8.3: this is the current object
package f04_this_call;

class Main {
    void helper() {}
    void run() { this.helper(); }
}
