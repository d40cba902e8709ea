import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.jar.*;
import javax.lang.model.element.*;
import javax.lang.model.type.*;
import javax.lang.model.util.*;
import javax.tools.*;
import com.sun.source.util.JavacTask;

/**
 * Java source stubs of compiled classes, for codegraph's Java library layer: one file per public
 * top-level type (OUT/a/b/Name.java) with its type parameters, supertypes, and public and
 * protected fields (constant values), constructors, methods (throws clauses) and member types;
 * no code. Names are written as a Java programmer would (imports, simple names where they are
 * not ambiguous), so the stubs read as the API does and index as sources do. Read through
 * javax.lang.model: the JDK's modules from the running JDK, other classes from the jars given.
 *
 *   java JavaStubs.java OUT --module java.se ... --jar a.jar ...
 *
 * A module brings those it requires transitively. Prints one line per file written:
 * "qualified.Name TAB origin" (origin: the module, or the jar's file name).
 */
public class JavaStubs {
    public static void main(String[] args) throws Exception {
        Path out = Paths.get(args[0]);
        List<String> modules = new ArrayList<>(), jars = new ArrayList<>();
        for (int i = 1; i + 1 < args.length; i += 2) {
            if (args[i].equals("--module")) modules.add(args[i + 1]);
            else if (args[i].equals("--jar") && readable(args[i + 1])) jars.add(args[i + 1]);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        // -parameters: javac then reads the names of parameters a class file keeps (MethodParameters, or
        // the local variable table of code compiled with -g); others stay arg0, arg1, ...
        List<String> options = new ArrayList<>(List.of("-proc:none", "-parameters"));
        if (!jars.isEmpty()) { options.add("-classpath"); options.add(String.join(File.pathSeparator, jars)); }
        if (!modules.isEmpty()) { options.add("--add-modules"); options.add(String.join(",", modules)); }  // java.se is no root of its own
        JavacTask task = (JavacTask) javac.getTask(null, null, d -> {}, options, null,
            List.of(new SimpleJavaFileObject(java.net.URI.create("string:///E.java"), JavaFileObject.Kind.SOURCE) {
                public CharSequence getCharContent(boolean b) { return "class E {}"; } }));
        task.analyze();
        Elements elements = task.getElements();
        PrintStream listing = new PrintStream(new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        Set<ModuleElement> all = new LinkedHashSet<>();
        for (String moduleName : modules) {
            ModuleElement module = elements.getModuleElement(moduleName);
            if (module != null) withTransitive(module, all);
        }
        for (ModuleElement module : all) {
            String moduleName = module.getQualifiedName().toString();
            for (Element p : module.getEnclosedElements()) {
                PackageElement pkg = (PackageElement) p;
                if (!exported(module, pkg)) continue;
                for (Element e : pkg.getEnclosedElements())
                    write(out, (TypeElement) e, elements, moduleName, listing);
            }
        }
        for (String jar : jars) {
            List<String> names = new ArrayList<>();
            try (JarFile file = new JarFile(jar)) {
                for (Enumeration<JarEntry> en = file.entries(); en.hasMoreElements(); ) {
                    String entry = en.nextElement().getName();
                    if (!entry.endsWith(".class") || entry.contains("$") || entry.startsWith("META-INF/")
                        || entry.endsWith("module-info.class") || entry.endsWith("package-info.class")) continue;
                    names.add(entry.substring(0, entry.length() - 6).replace('/', '.'));
                }
            } catch (IOException e) {
                continue;
            }
            Collections.sort(names);
            for (String name : names) {
                TypeElement type;
                try { type = elements.getTypeElement(name); } catch (RuntimeException e) { continue; }
                if (type != null) write(out, type, elements, Paths.get(jar).getFileName().toString(), listing);
            }
        }
        listing.flush();
    }

    /** A module and those it requires transitively (java.se: the Java SE platform's modules). */
    static void withTransitive(ModuleElement module, Set<ModuleElement> into) {
        if (!into.add(module)) return;
        for (ModuleElement.Directive d : module.getDirectives())
            if (d instanceof ModuleElement.RequiresDirective r && r.isTransitive()) withTransitive(r.getDependency(), into);
    }

    /** A jar javac can read: a damaged one would fail the whole task, so it is left out. */
    static boolean readable(String jar) {
        try (JarFile file = new JarFile(jar)) {
            return true;
        } catch (IOException | SecurityException e) {
            return false;
        }
    }

    static boolean exported(ModuleElement m, PackageElement p) {
        for (ModuleElement.Directive d : m.getDirectives())
            if (d instanceof ModuleElement.ExportsDirective x && x.getPackage().equals(p) && x.getTargetModules() == null) return true;
        return false;
    }

    static boolean visible(Element e) {
        Set<Modifier> m = e.getModifiers();
        return m.contains(Modifier.PUBLIC) || m.contains(Modifier.PROTECTED);
    }

    static void write(Path out, TypeElement type, Elements elements, String origin, PrintStream listing) {
        if (!type.getModifiers().contains(Modifier.PUBLIC) || type.getNestingKind() != NestingKind.TOP_LEVEL) return;
        String text;
        try {
            Stub stub = new Stub(type, elements);
            text = stub.render();
        } catch (RuntimeException | LinkageError e) {  // a class whose dependencies are not on the classpath
            return;
        }
        String q = type.getQualifiedName().toString();
        if (!javax.lang.model.SourceVersion.isName(q)) return;  // a class file may name itself anything: no path from it
        Path file = out.resolve(q.replace('.', '/') + ".java").normalize();
        if (!file.startsWith(out.normalize())) return;
        try {
            Files.createDirectories(file.getParent());
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return;
        }
        listing.println(q + "\t" + origin);
    }

    /** One top-level type's stub: rendered twice, once to learn the names it uses, once to write. */
    static class Stub {
        final TypeElement top;
        final Elements elements;
        final String pkg;
        final Set<TypeElement> used = new LinkedHashSet<>();
        final Set<String> inner = new HashSet<>();  // simple names of the member types, at any depth
        Map<TypeElement, String> names;  // each used top-level type as written (simple or qualified)
        StringBuilder sb;

        Stub(TypeElement top, Elements elements) {
            this.top = top;
            this.elements = elements;
            this.pkg = elements.getPackageOf(top).getQualifiedName().toString();
            collectInner(top);
        }

        void collectInner(TypeElement t) {
            for (Element e : t.getEnclosedElements())
                if (e instanceof TypeElement x) { inner.add(x.getSimpleName().toString()); collectInner(x); }
        }

        String render() {
            sb = new StringBuilder();
            names = null;
            type(top, "");  // the first pass fills `used`
            decideNames();
            sb = new StringBuilder();
            type(top, "");
            StringBuilder head = new StringBuilder();
            if (!pkg.isEmpty()) head.append("package ").append(pkg).append(";\n\n");
            List<String> imports = new ArrayList<>();
            for (Map.Entry<TypeElement, String> e : names.entrySet()) {
                String q = e.getKey().getQualifiedName().toString();
                // java.lang's and the package's own too: redundant for javac, they are what the
                // library layer's walk follows to a stub's supertypes and the types it names
                if (!e.getValue().contains(".") && !e.getKey().equals(top)) imports.add(q);
            }
            Collections.sort(imports);
            for (String q : imports) head.append("import ").append(q).append(";\n");
            if (!imports.isEmpty()) head.append('\n');
            return head.append(sb).toString();
        }

        /** A simple name for each used top-level type unless another type it could mean wins it. */
        void decideNames() {
            names = new LinkedHashMap<>();
            Map<String, List<TypeElement>> bySimple = new TreeMap<>();
            for (TypeElement t : used) bySimple.computeIfAbsent(t.getSimpleName().toString(), k -> new ArrayList<>()).add(t);
            for (Map.Entry<String, List<TypeElement>> e : bySimple.entrySet()) {
                List<TypeElement> all = e.getValue();
                all.sort(Comparator.comparing((TypeElement t) -> rank(t)).thenComparing(t -> t.getQualifiedName().toString()));
                boolean shadowed = inner.contains(e.getKey()) && !all.get(0).equals(top);
                for (int i = 0; i < all.size(); i++) {
                    TypeElement t = all.get(i);
                    boolean simple = i == 0 && !shadowed && (t.equals(top) || !e.getKey().equals(top.getSimpleName().toString()));
                    names.put(t, simple ? e.getKey() : t.getQualifiedName().toString());
                }
            }
        }

        /** Which type a simple name should mean first: the stub's own, its package's, java.lang's, then imports. */
        int rank(TypeElement t) {
            if (t.equals(top)) return 0;
            String p = elements.getPackageOf(t).getQualifiedName().toString();
            if (p.equals(pkg)) return 1;
            if (p.equals("java.lang")) return 2;
            return 3;
        }

        String typeName(TypeElement e) {
            Deque<String> path = new ArrayDeque<>();
            Element at = e;
            while (at.getEnclosingElement() instanceof TypeElement outer) {
                path.push(at.getSimpleName().toString());
                at = outer;
            }
            TypeElement outermost = (TypeElement) at;
            if (names == null) {
                used.add(outermost);
                return outermost.getQualifiedName().toString();
            }
            String head = names.getOrDefault(outermost, outermost.getQualifiedName().toString());
            return path.isEmpty() ? head : head + "." + String.join(".", path);
        }

        String t(TypeMirror m) {
            switch (m.getKind()) {
                case DECLARED: {
                    DeclaredType d = (DeclaredType) m;
                    String base = typeName((TypeElement) d.asElement());
                    if (d.getTypeArguments().isEmpty()) return base;
                    StringJoiner args = new StringJoiner(", ", "<", ">");
                    for (TypeMirror a : d.getTypeArguments()) args.add(t(a));
                    return base + args;
                }
                case ARRAY: return t(((ArrayType) m).getComponentType()) + "[]";
                case TYPEVAR: return ((TypeVariable) m).asElement().getSimpleName().toString();
                case WILDCARD: {
                    WildcardType w = (WildcardType) m;
                    if (w.getExtendsBound() != null) return "? extends " + t(w.getExtendsBound());
                    if (w.getSuperBound() != null) return "? super " + t(w.getSuperBound());
                    return "?";
                }
                case INTERSECTION: {
                    StringJoiner all = new StringJoiner(" & ");
                    for (TypeMirror b : ((IntersectionType) m).getBounds()) all.add(t(b));
                    return all.toString();
                }
                default: return m.toString();
            }
        }

        String typeParameters(List<? extends TypeParameterElement> params) {
            if (params.isEmpty()) return "";
            StringJoiner all = new StringJoiner(", ", "<", ">");
            for (TypeParameterElement p : params) {
                StringJoiner bounds = new StringJoiner(" & ");
                for (TypeMirror b : p.getBounds())
                    if (!(b.getKind() == TypeKind.DECLARED && ((TypeElement) ((DeclaredType) b).asElement())
                            .getQualifiedName().contentEquals("java.lang.Object"))) bounds.add(t(b));
                all.add(p.getSimpleName() + (bounds.length() > 0 ? " extends " + bounds : ""));
            }
            return all.toString();
        }

        String modifiers(Element e, boolean inInterface) {
            StringBuilder m = new StringBuilder();
            Set<Modifier> mods = e.getModifiers();
            if (mods.contains(Modifier.PUBLIC)) m.append("public ");
            if (mods.contains(Modifier.PROTECTED)) m.append("protected ");
            if (mods.contains(Modifier.ABSTRACT) && !inInterface && !(e instanceof TypeElement te && te.getKind().isInterface()))
                m.append("abstract ");
            if (mods.contains(Modifier.DEFAULT)) m.append("default ");
            if (mods.contains(Modifier.STATIC) && !(inInterface && e.getKind() == ElementKind.FIELD)) m.append("static ");
            if (mods.contains(Modifier.FINAL) && e.getKind() != ElementKind.ENUM && !(inInterface && e.getKind() == ElementKind.FIELD))
                m.append("final ");
            return m.toString();
        }

        void type(TypeElement e, String indent) {
            ElementKind kind = e.getKind();
            boolean isInterface = kind == ElementKind.INTERFACE || kind == ElementKind.ANNOTATION_TYPE;
            boolean outerInterface = e.getEnclosingElement() instanceof TypeElement o && o.getKind().isInterface();
            String word = switch (kind) {
                case INTERFACE -> "interface";
                case ANNOTATION_TYPE -> "@interface";
                case ENUM -> "enum";
                case RECORD -> "record";
                default -> "class";
            };
            sb.append(indent).append(modifiers(e, outerInterface)).append(word).append(' ').append(e.getSimpleName())
              .append(typeParameters(e.getTypeParameters()));
            Set<String> components = new HashSet<>();
            if (kind == ElementKind.RECORD) {
                StringJoiner parts = new StringJoiner(", ", "(", ")");
                for (RecordComponentElement c : e.getRecordComponents()) {
                    parts.add(t(c.asType()) + " " + c.getSimpleName());
                    components.add(c.getSimpleName().toString());
                }
                sb.append(parts);
            }
            TypeMirror sup = e.getSuperclass();
            if (kind == ElementKind.CLASS && sup.getKind() == TypeKind.DECLARED
                    && !((TypeElement) ((DeclaredType) sup).asElement()).getQualifiedName().contentEquals("java.lang.Object"))
                sb.append(" extends ").append(t(sup));
            List<? extends TypeMirror> interfaces = e.getInterfaces();
            if (!interfaces.isEmpty() && kind != ElementKind.ANNOTATION_TYPE) {
                StringJoiner all = new StringJoiner(", ");
                for (TypeMirror i : interfaces) all.add(t(i));
                sb.append(isInterface ? " extends " : " implements ").append(all);
            }
            sb.append(" {\n");
            String in = indent + "    ";
            if (kind == ElementKind.ENUM) {
                StringJoiner constants = new StringJoiner(", ");
                for (Element m : e.getEnclosedElements())
                    if (m.getKind() == ElementKind.ENUM_CONSTANT) constants.add(m.getSimpleName());
                sb.append(in).append(constants).append(";\n");
            }
            for (Element m : e.getEnclosedElements()) {
                if (!visible(m)) continue;
                if (m.getKind() == ElementKind.FIELD) {
                    VariableElement v = (VariableElement) m;
                    sb.append(in).append(modifiers(m, isInterface)).append(t(v.asType())).append(' ').append(v.getSimpleName());
                    Object value = v.getConstantValue();
                    if (value != null) sb.append(" = ").append(elements.getConstantExpression(value));
                    sb.append(";\n");
                } else if (m.getKind() == ElementKind.CONSTRUCTOR || m.getKind() == ElementKind.METHOD) {
                    ExecutableElement x = (ExecutableElement) m;
                    boolean constructor = m.getKind() == ElementKind.CONSTRUCTOR;
                    if (kind == ElementKind.ENUM && !constructor && x.getParameters().size() <= 1
                            && (x.getSimpleName().contentEquals("values") || x.getSimpleName().contentEquals("valueOf"))
                            && x.getModifiers().contains(Modifier.STATIC)) continue;  // declared by the language
                    if (kind == ElementKind.RECORD && !constructor && x.getParameters().isEmpty()
                            && components.contains(x.getSimpleName().toString())) continue;  // a component's accessor
                    if (constructor && kind == ElementKind.ENUM) continue;
                    sb.append(in).append(modifiers(m, isInterface));
                    String tp = typeParameters(x.getTypeParameters());
                    if (!tp.isEmpty()) sb.append(tp).append(' ');
                    if (!constructor) sb.append(t(x.getReturnType())).append(' ');
                    sb.append(constructor ? e.getSimpleName() : x.getSimpleName()).append('(');
                    List<? extends VariableElement> ps = x.getParameters();
                    for (int i = 0; i < ps.size(); i++) {
                        if (i > 0) sb.append(", ");
                        TypeMirror pt = ps.get(i).asType();
                        if (x.isVarArgs() && i == ps.size() - 1 && pt.getKind() == TypeKind.ARRAY)
                            sb.append(t(((ArrayType) pt).getComponentType())).append("...");
                        else sb.append(t(pt));
                        sb.append(' ').append(ps.get(i).getSimpleName());
                    }
                    sb.append(')');
                    if (!x.getThrownTypes().isEmpty()) {
                        StringJoiner thrown = new StringJoiner(", ", " throws ", "");
                        for (TypeMirror th : x.getThrownTypes()) thrown.add(t(th));
                        sb.append(thrown);
                    }
                    sb.append(constructor ? " {}\n" : ";\n");
                } else if (m instanceof TypeElement nested && visible(nested)) {
                    type(nested, in);
                }
            }
            sb.append(indent).append("}\n");
        }
    }
}
