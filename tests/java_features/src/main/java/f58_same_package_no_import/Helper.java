// JLS 7.4.1, 6.4: a class of the same package needs no import
package f58_same_package_no_import;

class Helper { void help() {} }
