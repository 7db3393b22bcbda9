
// judgebox split harness, Java: the runtime of the tests' process, which holds no code of the solution.
// The sandbox starts this JVM non-dumpable (the solution's process, same uid, can neither read its memory
// nor open its descriptors). start() reads the nonce, starts the solution's program (the command after
// "--", in the working folder; its stdin and stdout are the request and answer pipes, its stderr this
// process's) and sends the tests' own prints to nowhere; a call of the solution's method is a request
// and an answer (JudgeboxWire), so nothing the solution does reaches this process but the values it
// returns and the arguments it changed.
final class JudgeboxTests {
  private static java.io.PrintStream marker;
  private static String nonce;
  private static java.io.DataOutputStream requests;
  private static java.io.DataInputStream answers;

  static String[] start(String[] args) {
    try {
      nonce = new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
      int sep = java.util.Arrays.asList(args).indexOf("--");
      if (nonce == null || sep < 0 || sep + 1 >= args.length) lost("no nonce, or no command after --");
      ProcessBuilder pb = new ProcessBuilder(java.util.Arrays.copyOfRange(args, sep + 1, args.length));
      pb.directory(new java.io.File("..")).redirectError(ProcessBuilder.Redirect.INHERIT);
      Process solution = pb.start();
      requests = new java.io.DataOutputStream(new java.io.BufferedOutputStream(solution.getOutputStream()));
      answers = new java.io.DataInputStream(new java.io.BufferedInputStream(solution.getInputStream()));
      marker = System.out;
      System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
      return java.util.Arrays.copyOfRange(args, 0, sep);
    } catch (java.io.IOException e) {
      lost("cannot start the solution's program: " + e);
      return null;
    }
  }

  static void report(String status, int code) {
    marker.print("\n" + nonce + " " + status + "\n");
    marker.flush();
    Runtime.getRuntime().halt(code);
  }

  // no marker: the run is a runtime error
  static void lost(String why) {
    System.err.println("judgebox: " + why);
    System.err.flush();
    Runtime.getRuntime().halt(3);
  }

  // a call of the solution's method: its arguments go out, its result and the arguments as it left them
  // come back; an exception it raised is raised here (again)
  static Object call(Class<?> owner, String name, String[] types, Object[] args) {
    java.lang.reflect.Method m = null;
    Object result = null;
    Object[] back = new Object[args.length];
    char kind = 0;
    try {
      m = JudgeboxWire.entry(owner, name, types);
      java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
      java.io.DataOutputStream o = new java.io.DataOutputStream(buf);
      o.writeByte('c');
      for (Object a : args) JudgeboxWire.put(o, a);
      o.flush();
      requests.writeInt(buf.size());
      buf.writeTo(requests);
      requests.flush();
    } catch (java.io.IOException | JudgeboxWire.Bad e) {
      lost("the solution's process ended before a call of its method, or an argument cannot cross: " + e);
    }
    String raised = null, raisedKind = null;
    try {
      int size = answers.readInt();
      if (size < 1 || size > (256 << 20)) throw new JudgeboxWire.Bad("an answer of " + size + " bytes");
      byte[] answer = new byte[size];
      answers.readFully(answer);
      java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(answer));
      kind = (char) in.readUnsignedByte();
      if (kind == 'x') {
        raisedKind = JudgeboxWire.getString(in);
        boolean hasMessage = in.readBoolean();
        raised = JudgeboxWire.getString(in);
        if (!hasMessage) raised = null;
      } else if (kind == 'r') {
        result = JudgeboxWire.as(JudgeboxWire.get(in), m.getGenericReturnType());
        java.lang.reflect.Type[] declared = m.getGenericParameterTypes();
        for (int i = 0; i < args.length; i++) back[i] = JudgeboxWire.as(JudgeboxWire.get(in), declared[i]);
      } else {
        throw new JudgeboxWire.Bad("an answer of kind " + (int) kind);
      }
      if (in.available() != 0) throw new JudgeboxWire.Bad("more than one answer");
    } catch (java.io.IOException | JudgeboxWire.Bad e) {
      lost("the solution's process ended during a call of its method, or answered a malformed value: " + e);
    }
    if (raisedKind != null) JudgeboxTests.<RuntimeException>sneaky(again(raisedKind, raised));
    for (int i = 0; i < args.length; i++) writeBack(args[i], back[i]);
    return result;
  }

  // the solution's exception as the tests can catch it: the standard (java.*) class it is or extends,
  // with its message (a checked one too: thrown unchecked, as the tests' catch expects it); a class
  // the tests' process cannot make, a RuntimeException naming it
  private static Throwable again(String kind, String message) {
    if (kind.startsWith("java.")) {
      try {
        Class<?> c = Class.forName(kind, false, ClassLoader.getPlatformClassLoader());
        if (Throwable.class.isAssignableFrom(c))
          return (Throwable) c.getConstructor(String.class).newInstance(message);
      } catch (ReflectiveOperationException | LinkageError e) {
        // not one the tests' process can make: the general kind below
      }
    }
    return new RuntimeException("the solution raised " + kind + ": " + message);
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneaky(Throwable t) throws T {
    throw (T) t;
  }

  // an argument the solution changed in place changes here too (a list, set, map or array)
  @SuppressWarnings("unchecked")
  private static void writeBack(Object arg, Object now) {
    if (arg == null || now == null || arg.equals(now) && !arg.getClass().isArray()) return;
    try {
      if (arg instanceof java.util.List && now instanceof java.util.List) {
        java.util.List<Object> l = (java.util.List<Object>) arg, n = (java.util.List<Object>) now;
        if (l.size() == n.size()) { for (int i = 0; i < n.size(); i++) l.set(i, n.get(i)); }
        else { l.clear(); l.addAll(n); }
      } else if (arg instanceof java.util.Collection && now instanceof java.util.Collection) {
        ((java.util.Collection<Object>) arg).clear();
        ((java.util.Collection<Object>) arg).addAll((java.util.Collection<Object>) now);
      } else if (arg instanceof java.util.Map && now instanceof java.util.Map) {
        ((java.util.Map<Object, Object>) arg).clear();
        ((java.util.Map<Object, Object>) arg).putAll((java.util.Map<Object, Object>) now);
      } else if (arg.getClass().isArray() && now.getClass() == arg.getClass()
          && java.lang.reflect.Array.getLength(arg) == java.lang.reflect.Array.getLength(now)) {
        System.arraycopy(now, 0, arg, 0, java.lang.reflect.Array.getLength(now));
      }
    } catch (UnsupportedOperationException e) {
      // an unmodifiable argument: the solution's change would have failed in its own process
    }
  }
}

class JudgeboxRunner {
  public static void main(String[] args) throws Throwable {
    String[] own = JudgeboxTests.start(args);
    try {
      JUDGEBOX_OWNER.judgeboxTestsMain(own);
    } catch (AssertionError e) {
      e.printStackTrace();  // the failed assertion's place, as the one program shows it
      System.err.flush();
      JudgeboxTests.report(JUDGEBOX_FAIL, 1);
    }
    JudgeboxTests.report(JUDGEBOX_OK, 0);
  }
}
