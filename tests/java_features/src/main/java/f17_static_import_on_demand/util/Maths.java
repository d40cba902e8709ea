// JLS 7.5.4: static-import-on-demand
package f17_static_import_on_demand.util;

public class Maths { public static int cube(int x) { return x * x * x; } }
