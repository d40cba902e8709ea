// JLS 6.5.5.2: a fully qualified type name
package f59_fully_qualified_name.util;

public class Tools { public static int version() { return 1; } }
