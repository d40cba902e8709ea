// JLS 7.5.3: single-static-import
package f16_static_import_single.util;

public class Maths { public static int square(int x) { return x * x; } }
