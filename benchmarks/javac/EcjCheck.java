import java.io.*;
import java.nio.charset.StandardCharsets;

/** ECJ kept warm: the same request lines as JavacCheck (FILE TAB SOURCEPATH TAB CLASSPATH), its
 * messages in -Xemacs form, then a line "DONE". For measuring against javac only. */
public class EcjCheck {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            String[] p = line.split("\t", -1);
            StringWriter messages = new StringWriter();
            PrintWriter w = new PrintWriter(messages);
            java.util.List<String> a = new java.util.ArrayList<>(java.util.List.of("-17", "-proc:none", "-proceedOnError",
                "-d", "none", "-encoding", "UTF-8", "-nowarn", "-Xemacs"));
            if (p.length > 1 && !p[1].isEmpty()) { a.add("-sourcepath"); a.add(p[1]); }
            if (p.length > 2 && !p[2].isEmpty()) { a.add("-classpath"); a.add(p[2]); }
            a.add(p[0]);
            new org.eclipse.jdt.internal.compiler.batch.Main(w, w, false, null, null).compile(a.toArray(new String[0]));
            w.flush();
            out.print(messages);
            out.println("DONE");
        }
    }
}
