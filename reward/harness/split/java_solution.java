
// judgebox split harness, Java: the solution's program serves calls of its method. Requests come on
// stdin, answers go to stdout; System.out and System.in are nothing for the solution's own code.
class JudgeboxServer {
  public static void main(String[] a) throws Throwable {
    java.io.DataInputStream requests = new java.io.DataInputStream(new java.io.BufferedInputStream(
        new java.io.FileInputStream(java.io.FileDescriptor.in)));
    java.io.DataOutputStream answers = new java.io.DataOutputStream(new java.io.BufferedOutputStream(
        new java.io.FileOutputStream(java.io.FileDescriptor.out)));
    System.setOut(new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
    System.setIn(new java.io.ByteArrayInputStream(new byte[0]));
    java.lang.reflect.Method m = JudgeboxWire.entry(JUDGEBOX_OWNER.class, JUDGEBOX_NAME, JUDGEBOX_TYPES);
    java.lang.reflect.Type[] types = m.getGenericParameterTypes();
    Object self = null;
    while (true) {
      byte[] request;
      try {
        request = new byte[requests.readInt()];
      } catch (java.io.EOFException e) {
        return;
      }
      requests.readFully(request);
      java.io.DataInputStream in = new java.io.DataInputStream(new java.io.ByteArrayInputStream(request));
      if (in.readUnsignedByte() != 'c') return;
      Object[] args = new Object[types.length];
      for (int i = 0; i < types.length; i++) args[i] = JudgeboxWire.as(JudgeboxWire.get(in), types[i]);
      java.io.ByteArrayOutputStream buf = new java.io.ByteArrayOutputStream();
      java.io.DataOutputStream o = new java.io.DataOutputStream(buf);
      try {
        if (self == null && !java.lang.reflect.Modifier.isStatic(m.getModifiers())) {
          java.lang.reflect.Constructor<?> make = JUDGEBOX_OWNER.class.getDeclaredConstructor();
          make.setAccessible(true);
          self = make.newInstance();
        }
        Object result = m.invoke(self, args);
        o.writeByte('r');
        JudgeboxWire.put(o, result);
        for (Object arg : args) JudgeboxWire.put(o, arg);
      } catch (java.lang.reflect.InvocationTargetException e) {
        // the exception's class, or its nearest standard (java.*) ancestor, and its message
        Class<?> kind = e.getCause().getClass();
        while (!kind.getName().startsWith("java.")) kind = kind.getSuperclass();
        buf.reset();
        o.writeByte('x');
        JudgeboxWire.putString(o, kind.getName());
        String message = e.getCause().getMessage();
        o.writeBoolean(message != null);
        JudgeboxWire.putString(o, message == null ? "" : message);
      }
      o.flush();
      answers.writeInt(buf.size());
      buf.writeTo(answers);
      answers.flush();
    }
  }
}
