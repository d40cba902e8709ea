import com.sun.source.util.JavacTask;
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import javax.tools.*;

/**
 * codegraph's Java checker: javac kept warm in one process. It reads requests from stdin, one per
 * line, "FILE TAB SOURCEPATH TAB CLASSPATH" (paths joined by the platform's separator), attributes
 * FILE with javac (no class file is written, annotation processors do not run) and writes each
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

    static void check(JavaCompiler javac, String[] parts, PrintStream out) throws IOException {
        Path file = Paths.get(parts[0]);
        List<String> options = new ArrayList<>(List.of("-proc:none", "-implicit:none", "-Xlint:none", "-nowarn",
            "-Xmaxerrs", "1000", "-encoding", "UTF-8"));
        if (parts.length > 1 && !parts[1].isEmpty()) {
            options.add("-sourcepath");
            options.add(parts[1]);
        }
        options.add("-classpath");  // never the launcher's own: an empty classpath is an empty one
        options.add(parts.length > 2 ? parts[2] : "");
        DiagnosticCollector<JavaFileObject> found = new DiagnosticCollector<>();
        StandardJavaFileManager files = javac.getStandardFileManager(found, Locale.ROOT, StandardCharsets.UTF_8);
        JavacTask task = (JavacTask) javac.getTask(null, files, found, options, null,
            files.getJavaFileObjectsFromPaths(List.of(file)));
        task.analyze();
        String text = Files.readString(file, StandardCharsets.UTF_8);
        for (Diagnostic<? extends JavaFileObject> d : found.getDiagnostics()) {
            if (d.getKind() != Diagnostic.Kind.ERROR) continue;
            JavaFileObject source = d.getSource();
            boolean own = source != null && Paths.get(source.toUri()).normalize().equals(file.toAbsolutePath().normalize());
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
        files.close();
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
