
// judgebox split harness, Java: the typed values that cross between the tests' and the solution's
// processes. Each value carries its kind: null, the eight primitives' boxes (floats bit for bit, NaN
// and infinities kept), strings (UTF-16 units, lone surrogates kept), BigInteger, BigDecimal, lists,
// sets, maps (in iteration order), Optional, org.javatuples tuples and arrays, nested. A value is
// read back as the type the receiving side declares (get): ArrayList, LinkedList, HashMap, TreeMap,
// HashSet, TreeSet, ... A malformed or mistyped value is a JudgeboxWire.Bad.
final class JudgeboxWire {
  static final class Bad extends Exception {
    Bad(String why) { super(why); }
  }

  private static final String[] TUPLES = {"Unit", "Pair", "Triplet", "Quartet", "Quintet", "Sextet", "Septet",
      "Octet", "Ennead", "Decade"};

  static void put(java.io.DataOutputStream o, Object v) throws java.io.IOException, Bad {
    if (v == null) { o.writeByte('N'); }
    else if (v instanceof Boolean) { o.writeByte('Z'); o.writeBoolean((Boolean) v); }
    else if (v instanceof Byte) { o.writeByte('B'); o.writeByte((Byte) v); }
    else if (v instanceof Short) { o.writeByte('S'); o.writeShort((Short) v); }
    else if (v instanceof Character) { o.writeByte('C'); o.writeChar((Character) v); }
    else if (v instanceof Integer) { o.writeByte('I'); o.writeInt((Integer) v); }
    else if (v instanceof Long) { o.writeByte('J'); o.writeLong((Long) v); }
    else if (v instanceof Float) { o.writeByte('F'); o.writeInt(Float.floatToRawIntBits((Float) v)); }
    else if (v instanceof Double) { o.writeByte('D'); o.writeLong(Double.doubleToRawLongBits((Double) v)); }
    else if (v instanceof String) { o.writeByte('s'); putString(o, (String) v); }
    else if (v instanceof java.math.BigInteger) { o.writeByte('b'); putBytes(o, ((java.math.BigInteger) v).toByteArray()); }
    else if (v instanceof java.math.BigDecimal) {
      o.writeByte('d'); o.writeInt(((java.math.BigDecimal) v).scale());
      putBytes(o, ((java.math.BigDecimal) v).unscaledValue().toByteArray());
    }
    else if (v instanceof java.util.Optional) {
      java.util.Optional<?> opt = (java.util.Optional<?>) v;
      o.writeByte('O'); o.writeBoolean(opt.isPresent()); if (opt.isPresent()) put(o, opt.get());
    }
    else if (v instanceof java.util.List) { o.writeByte('L'); putAll(o, (java.util.Collection<?>) v); }
    else if (v instanceof java.util.Set) { o.writeByte('T'); putAll(o, (java.util.Collection<?>) v); }
    else if (v instanceof java.util.Map) {
      java.util.Map<?, ?> m = (java.util.Map<?, ?>) v;
      o.writeByte('M'); o.writeInt(m.size());
      for (java.util.Map.Entry<?, ?> e : m.entrySet()) { put(o, e.getKey()); put(o, e.getValue()); }
    }
    else if (v.getClass().isArray()) {
      Class<?> c = v.getClass().getComponentType();
      int n = java.lang.reflect.Array.getLength(v);
      o.writeByte('A'); putString(o, c.getName()); o.writeInt(n);
      for (int i = 0; i < n; i++) put(o, java.lang.reflect.Array.get(v, i));
    }
    else if (v.getClass().getName().startsWith("org.javatuples.")) {
      int size = java.util.Arrays.asList(TUPLES).indexOf(v.getClass().getSimpleName()) + 1;
      if (size == 0) throw new Bad("a value of type " + v.getClass().getName());
      o.writeByte('P'); o.writeByte(size);
      try {
        java.lang.reflect.Method at = v.getClass().getMethod("getValue", int.class);
        for (int i = 0; i < size; i++) put(o, at.invoke(v, i));
      } catch (ReflectiveOperationException e) { throw new Bad("a tuple: " + e); }
    }
    else throw new Bad("a value of type " + v.getClass().getName() + " cannot cross");
  }

  private static void putAll(java.io.DataOutputStream o, java.util.Collection<?> c) throws java.io.IOException, Bad {
    o.writeInt(c.size());
    for (Object e : c) put(o, e);
  }

  static void putString(java.io.DataOutputStream o, String s) throws java.io.IOException {
    o.writeInt(s.length());
    o.writeChars(s);
  }

  private static void putBytes(java.io.DataOutputStream o, byte[] b) throws java.io.IOException {
    o.writeInt(b.length);
    o.write(b);
  }

  private static int size(java.io.DataInputStream in) throws java.io.IOException, Bad {
    int n = in.readInt();
    if (n < 0) throw new Bad("a negative size");
    return n;
  }

  static String getString(java.io.DataInputStream in) throws java.io.IOException, Bad {
    int n = size(in);
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) s.append(in.readChar());
    return s.toString();
  }

  private static byte[] getBytes(java.io.DataInputStream in) throws java.io.IOException, Bad {
    byte[] b = new byte[size(in)];
    in.readFully(b);
    return b;
  }

  // a value as its kind says (ArrayList, LinkedHashSet, LinkedHashMap for the collections)
  static Object get(java.io.DataInputStream in) throws java.io.IOException, Bad {
    int kind = in.readUnsignedByte();
    switch (kind) {
      case 'N': return null;
      case 'Z': return in.readBoolean();
      case 'B': return in.readByte();
      case 'S': return in.readShort();
      case 'C': return in.readChar();
      case 'I': return in.readInt();
      case 'J': return in.readLong();
      case 'F': return Float.intBitsToFloat(in.readInt());
      case 'D': return Double.longBitsToDouble(in.readLong());
      case 's': return getString(in);
      case 'b': {
        byte[] b = getBytes(in);
        if (b.length == 0) throw new Bad("an empty BigInteger");
        return new java.math.BigInteger(b);
      }
      case 'd': {
        int scale = in.readInt();
        byte[] b = getBytes(in);
        if (b.length == 0) throw new Bad("an empty BigDecimal");
        return new java.math.BigDecimal(new java.math.BigInteger(b), scale);
      }
      case 'O': return in.readBoolean() ? java.util.Optional.of(nonNull(get(in))) : java.util.Optional.empty();
      case 'L': case 'T': {
        int n = size(in);
        java.util.Collection<Object> c = kind == 'L' ? new java.util.ArrayList<>() : new java.util.LinkedHashSet<>();
        for (int i = 0; i < n; i++) c.add(get(in));
        return c;
      }
      case 'M': {
        int n = size(in);
        java.util.Map<Object, Object> m = new java.util.LinkedHashMap<>();
        for (int i = 0; i < n; i++) { Object k = get(in); m.put(k, get(in)); }
        return m;
      }
      case 'A': {
        Class<?> c = component(getString(in));
        int n = size(in);
        Object a = java.lang.reflect.Array.newInstance(c, n);
        for (int i = 0; i < n; i++) {
          Object e = get(in);
          if (c.isPrimitive() ? e == null : (e != null && !c.isInstance(e))) throw new Bad("an array element of another type");
          try { java.lang.reflect.Array.set(a, i, e); }
          catch (IllegalArgumentException x) { throw new Bad("an array element of another type"); }
        }
        return a;
      }
      case 'P': {
        int size = in.readUnsignedByte();
        if (size < 1 || size > TUPLES.length) throw new Bad("a tuple of " + size);
        Object[] items = new Object[size];
        for (int i = 0; i < size; i++) items[i] = get(in);
        try {
          Class<?> t = Class.forName("org.javatuples." + TUPLES[size - 1]);
          return t.getMethod("fromArray", Object[].class).invoke(null, (Object) items);
        } catch (ReflectiveOperationException e) { throw new Bad("a tuple: " + e); }
      }
      default: throw new Bad("an unknown kind " + kind);
    }
  }

  private static Object nonNull(Object v) throws Bad {
    if (v == null) throw new Bad("an Optional of null");
    return v;
  }

  private static final java.util.Map<String, Class<?>> COMPONENTS = new java.util.HashMap<>();
  static {
    for (Class<?> c : new Class<?>[] {boolean.class, byte.class, short.class, char.class, int.class, long.class,
        float.class, double.class, Boolean.class, Byte.class, Short.class, Character.class, Integer.class, Long.class,
        Float.class, Double.class, String.class, java.math.BigInteger.class, java.math.BigDecimal.class, Object.class})
      COMPONENTS.put(c.getName(), c);
  }

  // an array's component type: the primitives, their boxes, String, BigInteger, BigDecimal, arrays of these
  private static Class<?> component(String name) throws Bad {
    Class<?> c = COMPONENTS.get(name);
    if (c != null) return c;
    if (name.startsWith("[")) {
      String base = name.replaceAll("^\\[+", "");
      if (base.matches("[ZBSCIJFD]") || (base.startsWith("L") && base.endsWith(";")
          && COMPONENTS.containsKey(base.substring(1, base.length() - 1)))) {
        try { return Class.forName(name, false, JudgeboxWire.class.getClassLoader()); }
        catch (ClassNotFoundException e) { throw new Bad("an array of " + name); }
      }
    }
    throw new Bad("an array of " + name);
  }

  // v (as get returned it) as a value of the declared type t
  static Object as(Object v, java.lang.reflect.Type t) throws Bad {
    Class<?> raw = raw(t);
    if (raw == null) return v;
    if (raw.isPrimitive()) {
      if (raw == void.class) return null;
      if (v == null || !box(raw).isInstance(v)) throw new Bad("not a " + raw.getName());
      return v;
    }
    if (v == null) return null;
    java.lang.reflect.Type[] args = t instanceof java.lang.reflect.ParameterizedType
        ? ((java.lang.reflect.ParameterizedType) t).getActualTypeArguments() : null;
    if (v instanceof java.util.Optional && raw == java.util.Optional.class) {
      java.util.Optional<?> opt = (java.util.Optional<?>) v;
      return opt.isPresent() ? java.util.Optional.of(as(opt.get(), args == null ? null : args[0])) : opt;
    }
    if (v instanceof java.util.Collection && java.util.Collection.class.isAssignableFrom(raw)) {
      java.util.Collection<Object> c = collection(raw, v instanceof java.util.List);
      for (Object e : (java.util.Collection<?>) v) c.add(as(e, args == null ? null : args[0]));
      return c;
    }
    if (v instanceof java.util.Map && java.util.Map.class.isAssignableFrom(raw)) {
      java.util.Map<Object, Object> m = map(raw);
      for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) v).entrySet())
        m.put(as(e.getKey(), args == null ? null : args[0]), as(e.getValue(), args == null ? null : args[1]));
      return m;
    }
    if (!raw.isInstance(v)) throw new Bad("a " + v.getClass().getName() + " for a " + raw.getName());
    return v;
  }

  private static Class<?> raw(java.lang.reflect.Type t) {
    if (t instanceof Class) return (Class<?>) t;
    if (t instanceof java.lang.reflect.ParameterizedType) return (Class<?>) ((java.lang.reflect.ParameterizedType) t).getRawType();
    if (t instanceof java.lang.reflect.GenericArrayType) return Object[].class;
    return null;  // a wildcard or type variable: the value as it came
  }

  private static Class<?> box(Class<?> p) {
    return java.lang.reflect.Array.get(java.lang.reflect.Array.newInstance(p, 1), 0).getClass();
  }

  private static java.util.Collection<Object> collection(Class<?> raw, boolean list) throws Bad {
    if (!raw.isInterface() && !java.lang.reflect.Modifier.isAbstract(raw.getModifiers())) {
      try { @SuppressWarnings("unchecked") java.util.Collection<Object> c = (java.util.Collection<Object>) raw.getDeclaredConstructor().newInstance(); return c; }
      catch (ReflectiveOperationException e) { throw new Bad("a " + raw.getName()); }
    }
    if (java.util.SortedSet.class.isAssignableFrom(raw)) return new java.util.TreeSet<>();
    if (java.util.Set.class.isAssignableFrom(raw)) return new java.util.LinkedHashSet<>();  // the sender's order
    if (java.util.Queue.class.isAssignableFrom(raw)) return new java.util.ArrayDeque<>();
    return list || java.util.List.class.isAssignableFrom(raw) ? new java.util.ArrayList<>() : new java.util.HashSet<>();
  }

  private static java.util.Map<Object, Object> map(Class<?> raw) throws Bad {
    if (!raw.isInterface() && !java.lang.reflect.Modifier.isAbstract(raw.getModifiers())) {
      try { @SuppressWarnings("unchecked") java.util.Map<Object, Object> m = (java.util.Map<Object, Object>) raw.getDeclaredConstructor().newInstance(); return m; }
      catch (ReflectiveOperationException e) { throw new Bad("a " + raw.getName()); }
    }
    return java.util.SortedMap.class.isAssignableFrom(raw) ? new java.util.TreeMap<>() : new java.util.LinkedHashMap<>();
  }

  // the entry method of owner: named name, with parameters of the prompt's (erased) simple type names
  // (a solution's helper of the same name, an overload, is not it)
  static java.lang.reflect.Method entry(Class<?> owner, String name, String[] types) throws Bad {
    java.lang.reflect.Method found = null;
    for (java.lang.reflect.Method m : owner.getDeclaredMethods()) {
      if (!m.getName().equals(name) || m.isSynthetic() || m.isBridge() || m.getParameterCount() != types.length) continue;
      Class<?>[] declared = m.getParameterTypes();
      boolean same = true;
      for (int i = 0; i < types.length; i++) same &= declared[i].getSimpleName().equals(types[i]);
      if (!same) continue;
      if (found != null) throw new Bad("more than one method " + name);
      found = m;
    }
    if (found == null) throw new Bad("no method " + name + " with the prompt's parameter types");
    found.setAccessible(true);
    return found;
  }
}
