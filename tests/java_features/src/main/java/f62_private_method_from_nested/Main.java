// JLS 6.6.1: a private member is accessible within the top level class
package f62_private_method_from_nested;

class Main {
    private void secret() {}
    static class Peer { void poke(Main m) { m.secret(); } }
}
