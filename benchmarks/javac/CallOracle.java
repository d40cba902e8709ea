import com.sun.source.tree.*;
import com.sun.source.util.*;
import java.io.*;
import java.nio.file.*;
import java.util.*;
import javax.lang.model.element.*;
import javax.lang.model.type.*;
import javax.tools.*;

/**
 * The call graph as javac sees it: every method invocation, class instance creation and method
 * reference in the sources under a root, with the method symbol javac's attribution gave it,
 * written as "caller TAB callee TAB line" where both ends are code of those sources. Names follow
 * codegraph's spelling of Java: Outer.Inner.method(T1,T2) with parameter types by simple erased
 * name (a type variable by its own name, arrays and varargs as []), constructors as <init>,
 * anonymous and local classes as Outer$1 and Outer$1Local. Code outside a method (field
 * initializers, initializer blocks) is its class's; code in a lambda is its method's.
 *
 * Usage: java CallOracle SOURCE_ROOT OUT.tsv [CLASSPATH]
 */
public class CallOracle {
    public static void main(String[] args) throws Exception {
        Path root = Paths.get(args[0]);
        List<Path> files;
        try (var walk = Files.walk(root)) {
            files = walk.filter(p -> p.toString().endsWith(".java"))
                .filter(p -> !p.getFileName().toString().equals("module-info.java"))
                .sorted().toList();
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StandardJavaFileManager fm = javac.getStandardFileManager(null, null, java.nio.charset.StandardCharsets.UTF_8);
        List<String> options = new ArrayList<>(List.of("-proc:none", "-implicit:none", "-nowarn", "-Xlint:none",
            "-XDshould-stop.ifError=FLOW", "-Xmaxerrs", "100000"));
        if (args.length > 2 && !args[2].isEmpty()) {
            options.add("-cp");
            options.add(args[2]);
        }
        DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
        JavacTask task = (JavacTask) javac.getTask(null, fm, diagnostics, options, null,
            fm.getJavaFileObjectsFromPaths(files));
        Iterable<? extends CompilationUnitTree> units = task.parse();
        task.analyze();
        Trees trees = Trees.instance(task);
        var elements = task.getElements();
        Set<TypeElement> ours = new HashSet<>();
        for (CompilationUnitTree unit : units) {
            new TreePathScanner<Void, Void>() {
                @Override public Void visitClass(ClassTree node, Void v) {
                    Element e = trees.getElement(getCurrentPath());
                    if (e instanceof TypeElement t) ours.add(t);
                    return super.visitClass(node, v);
                }
            }.scan(unit, null);
        }
        long errors = diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR).count();
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(Paths.get(args[1])))) {
            for (CompilationUnitTree unit : units) {
                SourcePositions positions = trees.getSourcePositions();
                LineMap lines = unit.getLineMap();
                new TreePathScanner<Void, Void>() {
                    final Deque<String> callers = new ArrayDeque<>();

                    String name(TypeElement t) {
                        switch (t.getNestingKind()) {
                            case TOP_LEVEL: return t.getQualifiedName().toString();
                            case MEMBER: return name((TypeElement) t.getEnclosingElement()) + "." + t.getSimpleName();
                            default: {
                                Element outer = t.getEnclosingElement();
                                while (!(outer instanceof TypeElement)) outer = outer.getEnclosingElement();
                                String binary = elements.getBinaryName(t).toString();
                                return name((TypeElement) outer) + "$" + binary.substring(binary.lastIndexOf('$') + 1);
                            }
                        }
                    }

                    String type(TypeMirror t) {
                        switch (t.getKind()) {
                            case ARRAY: return type(((ArrayType) t).getComponentType()) + "[]";
                            case TYPEVAR: return ((TypeVariable) t).asElement().getSimpleName().toString();
                            case DECLARED: return ((DeclaredType) t).asElement().getSimpleName().toString();
                            default: return t.toString().replaceAll(".*\\s", "");
                        }
                    }

                    String name(ExecutableElement m) {
                        StringJoiner params = new StringJoiner(",", "(", ")");
                        for (VariableElement p : m.getParameters()) params.add(type(p.asType()));
                        String simple = m.getKind() == ElementKind.CONSTRUCTOR ? "<init>" : m.getSimpleName().toString();
                        return name((TypeElement) m.getEnclosingElement()) + "." + simple + params;
                    }

                    void record(Tree node, Element callee) {
                        if (!(callee instanceof ExecutableElement m) || callers.isEmpty()) return;
                        if (!(m.getEnclosingElement() instanceof TypeElement owner) || !ours.contains(owner)) return;
                        long start = positions.getStartPosition(unit, node);
                        if (start < 0) return;  // code javac made (an implicit super())
                        out.println(callers.peek() + "\t" + name(m) + "\t" + lines.getLineNumber(start));
                    }

                    @Override public Void visitClass(ClassTree node, Void v) {
                        Element e = trees.getElement(getCurrentPath());
                        if (!(e instanceof TypeElement t)) return null;
                        callers.push(name(t));
                        try { return super.visitClass(node, v); } finally { callers.pop(); }
                    }

                    @Override public Void visitMethod(MethodTree node, Void v) {
                        Element e = trees.getElement(getCurrentPath());
                        if (!(e instanceof ExecutableElement m)) return null;
                        if (positions.getEndPosition(unit, node) < 0) return null;  // a default constructor javac made
                        callers.push(name(m));
                        try { return super.visitMethod(node, v); } finally { callers.pop(); }
                    }

                    @Override public Void visitMethodInvocation(MethodInvocationTree node, Void v) {
                        record(node, trees.getElement(getCurrentPath()));
                        return super.visitMethodInvocation(node, v);
                    }

                    @Override public Void visitNewClass(NewClassTree node, Void v) {
                        if (node.getClassBody() == null) {
                            record(node, trees.getElement(getCurrentPath()));
                        } else {  // new C(args) { ... }: the anonymous class's constructor runs C's
                            record(node, superConstructor(node));
                        }
                        return super.visitNewClass(node, v);
                    }

                    /** The constructor of its superclass an anonymous class's constructor calls. */
                    Element superConstructor(NewClassTree node) {
                        Element anonymous = trees.getElement(new TreePath(getCurrentPath(), node.getClassBody()));
                        if (!(anonymous instanceof TypeElement t)) return null;
                        for (Element member : t.getEnclosedElements()) {
                            if (member.getKind() != ElementKind.CONSTRUCTOR) continue;
                            Tree body = trees.getTree(member);
                            if (body == null) return null;
                            Element[] found = {null};
                            new TreeScanner<Void, Void>() {
                                @Override public Void visitMethodInvocation(MethodInvocationTree call, Void w) {
                                    if (call.getMethodSelect().toString().equals("super") && found[0] == null) {
                                        found[0] = ((com.sun.tools.javac.tree.JCTree.JCMethodInvocation) call)
                                            .meth instanceof com.sun.tools.javac.tree.JCTree.JCIdent id ? id.sym : null;
                                    }
                                    return super.visitMethodInvocation(call, w);
                                }
                            }.scan(body, null);
                            return found[0];
                        }
                        return null;
                    }

                    @Override public Void visitMemberReference(MemberReferenceTree node, Void v) {
                        record(node, trees.getElement(getCurrentPath()));
                        return super.visitMemberReference(node, v);
                    }
                }.scan(unit, null);
            }
        }
        System.out.println(files.size() + " files, " + errors + " errors");
    }
}
