import com.sun.source.util.JavacTask;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import javax.tools.*;

/**
 * codegraph's Java checker: javac kept warm in one process. It reads requests from stdin, one per
 * line, "FILE TAB SOURCEPATH TAB CLASSPATH" (paths joined by the platform's separator), attributes
 * FILE with javac (no class file is written; annotation processors do not run, but Lombok's when
 * it is on the classpath, on the file and the sources it uses) and writes each
 * error as one JSON object per line, then {"done":true}. An error carries javac's key
 * (compiler.err.cant.resolve.location.args), its message in the root locale (English, whatever
 * the user's locale: the rules read it) and its span. Only the public javax.tools API is used.
 */
public class JavacCheck {
    public static void main(String[] args) throws Exception {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(new PrintStream(OutputStream.nullOutputStream()));  // nothing but answers on stdout
        out.println("{\"ready\":true}");
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            try {
                check(javac, parts, out);
            } catch (Throwable e) {
                out.println("{\"failed\":" + quote(e.toString()) + "}");
            }
            out.println("{\"done\":true}");
        }
    }

    static final String LOMBOK = "lombok.launch.AnnotationProcessorHider$AnnotationProcessor,"
        + "lombok.launch.AnnotationProcessorHider$ClaimingProcessor";
    static final int LOMBOK_PASSES = 3;
    static Path scratch;

    /** Is Lombok on the classpath? Its members (a @Slf4j class's log, @Getter's getters) exist only
     * when its processor runs on the class that declares them. */
    static boolean lombok(String classpath) {
        for (String entry : classpath.split(File.pathSeparator)) {
            String name = Paths.get(entry).getFileName() == null ? "" : Paths.get(entry).getFileName().toString();
            if (name.startsWith("lombok") && name.endsWith(".jar")) return true;
        }
        return false;
    }

    static void check(JavaCompiler javac, String[] parts, PrintStream out) throws IOException {
        Path file = Paths.get(parts[0]).toAbsolutePath().normalize();
        String classpath = parts.length > 2 ? parts[2] : "";
        boolean lombok = lombok(classpath);
        List<String> options = new ArrayList<>(List.of("-implicit:none", "-Xlint:none", "-nowarn",
            "-Xmaxerrs", "1000", "-encoding", "UTF-8"));
        if (lombok) {
            // Lombok's processor alone, writing nowhere that matters; the classes the file uses from
            // the sources beside it are processed too (implicitly read sources are not): each pass
            // adds those the last one read, until none is new
            if (scratch == null) scratch = Files.createTempDirectory("codegraph-javac-");
            options.addAll(List.of("-processor", LOMBOK, "-d", scratch.toString(), "-s", scratch.toString()));
        } else {
            options.add("-proc:none");
        }
        if (parts.length > 1 && !parts[1].isEmpty()) {
            options.add("-sourcepath");
            options.add(parts[1]);
        }
        options.add("-classpath");  // never the launcher's own: an empty classpath is an empty one
        options.add(classpath);
        Set<Path> roots = new LinkedHashSet<>(List.of(file));
        DiagnosticCollector<JavaFileObject> found = null;
        for (int pass = 0; pass < (lombok ? LOMBOK_PASSES : 1); pass++) {
            found = new DiagnosticCollector<>();
            StandardJavaFileManager files = javac.getStandardFileManager(found, Locale.ROOT, StandardCharsets.UTF_8);
            JavacTask task = (JavacTask) javac.getTask(null, files, found, options, null,
                files.getJavaFileObjectsFromPaths(new ArrayList<>(roots)));
            Set<Path> read = new LinkedHashSet<>();
            task.addTaskListener(new com.sun.source.util.TaskListener() {
                public void finished(com.sun.source.util.TaskEvent e) {
                    if (e.getKind() == com.sun.source.util.TaskEvent.Kind.PARSE && e.getSourceFile() != null
                            && "file".equals(e.getSourceFile().toUri().getScheme())) {
                        read.add(Paths.get(e.getSourceFile().toUri()).normalize());
                    }
                }
            });
            task.analyze();
            files.close();
            read.removeAll(roots);
            if (scratch != null) read.removeIf(p -> p.startsWith(scratch));
            if (read.isEmpty()) break;
            roots.addAll(read);
        }
        String text = Files.readString(file, StandardCharsets.UTF_8);
        for (Diagnostic<? extends JavaFileObject> d : found.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) continue;
            JavaFileObject source = d.getSource();
            boolean own = source != null && Paths.get(source.toUri()).normalize().equals(file);
            if (lombok && source != null && !own) continue;  // the roots added to be processed are not the question
            long end = d.getEndPosition();
            int[] endAt = own && end >= 0 ? lineColumn(text, (int) Math.min(end, text.length())) : null;
            StringBuilder row = new StringBuilder("{");
            row.append("\"code\":").append(quote(d.getCode()));
            row.append(",\"message\":").append(quote(d.getMessage(Locale.ROOT)));
            row.append(",\"path\":").append(quote(source == null ? "" : source.toUri().getPath()));
            row.append(",\"line\":").append(d.getLineNumber());
            row.append(",\"column\":").append(d.getColumnNumber());
            if (endAt != null) row.append(",\"end_line\":").append(endAt[0]).append(",\"end_column\":").append(endAt[1]);
            out.println(row.append("}"));
        }
    }

    static int[] lineColumn(String text, int offset) {
        int line = 1, start = 0;
        for (int i = 0; i < offset; i++) {
            if (text.charAt(i) == '\n') {
                line++;
                start = i + 1;
            }
        }
        return new int[] {line, offset - start};  // the column 0-based: the end is exclusive
    }

    static String quote(String s) {
        if (s == null) return "null";
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}
