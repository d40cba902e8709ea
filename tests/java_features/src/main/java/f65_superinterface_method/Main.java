// JLS 9.1.3: an interface inherits its superinterfaces' methods
package f65_superinterface_method;

interface Closeable2 { void shut(); }
interface Resource extends Closeable2 {}
class Main {
    void run(Resource r) { r.shut(); }
}
