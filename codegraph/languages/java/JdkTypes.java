import java.util.*;
import javax.lang.model.element.*;
import javax.lang.model.type.*;
import javax.lang.model.util.*;
import javax.tools.*;
import com.sun.source.util.JavacTask;

/**
 * The public types of JDK modules as codegraph's Java resolver reads them, one line each: "C TAB
 * class TAB supertypes", "M TAB class TAB method TAB parameter types TAB return type", "F TAB class
 * TAB field TAB type"; types erased and fully qualified. Run with the single-file launcher:
 * java JdkTypes.java java.base ...
 */
public class JdkTypes {
    public static void main(String[] args) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        JavacTask task = (JavacTask) javac.getTask(null, null, null, List.of("-proc:none"), null,
            List.of(new SimpleJavaFileObject(java.net.URI.create("string:///E.java"), JavaFileObject.Kind.SOURCE) {
                public CharSequence getCharContent(boolean b) { return "class E {}"; } }));
        task.analyze();
        Elements elements = task.getElements();
        Types types = task.getTypes();
        StringBuilder out = new StringBuilder();
        for (String moduleName : args) {
            ModuleElement module = elements.getModuleElement(moduleName);
            if (module == null) continue;
            for (Element p : module.getEnclosedElements()) {
                PackageElement pkg = (PackageElement) p;
                if (!module.isOpen() && !exported(module, pkg)) continue;
                for (Element e : pkg.getEnclosedElements()) walk((TypeElement) e, types, out);
            }
        }
        System.out.print(out);
    }
    static boolean exported(ModuleElement m, PackageElement p) {
        for (ModuleElement.Directive d : m.getDirectives())
            if (d instanceof ModuleElement.ExportsDirective x && x.getPackage().equals(p) && x.getTargetModules() == null) return true;
        return false;
    }
    static String name(TypeMirror t, Types types) {
        TypeMirror erased = types.erasure(t);
        if (erased.getKind() == TypeKind.DECLARED) return ((TypeElement) ((DeclaredType) erased).asElement()).getQualifiedName().toString();
        if (erased.getKind() == TypeKind.ARRAY) return name(((ArrayType) erased).getComponentType(), types) + "[]";
        return erased.toString();
    }
    static void walk(TypeElement t, Types types, StringBuilder out) {
        if (!t.getModifiers().contains(Modifier.PUBLIC)) return;
        String q = t.getQualifiedName().toString();
        StringJoiner sup = new StringJoiner(",");
        if (t.getSuperclass().getKind() == TypeKind.DECLARED) sup.add(name(t.getSuperclass(), types));
        for (TypeMirror i : t.getInterfaces()) sup.add(name(i, types));
        out.append("C\t").append(q).append('\t').append(sup).append('\n');
        for (Element m : t.getEnclosedElements()) {
            if (!m.getModifiers().contains(Modifier.PUBLIC) && !m.getModifiers().contains(Modifier.PROTECTED)) continue;
            if (m instanceof ExecutableElement x && m.getKind() == ElementKind.METHOD) {
                StringJoiner ps = new StringJoiner(",");
                for (VariableElement v : x.getParameters()) ps.add(name(v.asType(), types));
                out.append("M\t").append(q).append('\t').append(x.getSimpleName()).append('\t').append(ps)
                   .append('\t').append(name(x.getReturnType(), types)).append('\n');
            } else if (m.getKind() == ElementKind.FIELD) {
                out.append("F\t").append(q).append('\t').append(m.getSimpleName()).append('\t').append(name(m.asType(), types)).append('\n');
            } else if (m instanceof TypeElement inner) {
                walk(inner, types, out);
            }
        }
    }
}
