// JLS 7.5.2: type-import-on-demand
package f19_type_import_on_demand.model;

public class Invoice { public void pay() {} }
