// JLS 7.5.1: single-type-import of another package's class
package f18_single_type_import.model;

public class Order { public void ship() {} }
