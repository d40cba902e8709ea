// JLS 15.12.2.4: a variable arity method called with none
package f63_varargs_no_arguments;

class Main {
    int count(String... names) { return names.length; }
    int run() { return count(); }
}
