// JuteOracle answers, one line per request on stdin, what ZooKeeper's own Jute
// classes make of a record, so that the Go codec in internal/server/jute can be
// compared with them (claim E5). It is compiled at test time against the
// server's jar and never committed as a binary.
//
// Requests and replies are single ASCII lines:
//
//   decode CLASS HEX  -> ok CONSUMED REENCODED-HEX TREE
//     BinaryInputArchive reads a CLASS from the bytes; the reply says how many
//     bytes it consumed, the record as BinaryOutputArchive writes it back, and
//     its fields.
//   encode CLASS TREE -> ok HEX TREE
//     the record is filled from TREE by field name, and BinaryOutputArchive
//     writes it; the reply also gives the fields the record then holds.
//   about CLASS...    -> ok JSON  (version, and the jar each class came from)
//   consts            -> ok JSON  (ZooDefs.OpCode and ClientCnxn's *_XID)
//   any failure       -> err MESSAGE
//
// A TREE is compact JSON: a record is an object keyed by the tags the
// generated serialize/deserialize code passes to the archive (its field
// names), a vector is an array, int and long are numbers, a boolean is true or
// false, and a ustring or a buffer is the hex of its bytes (a ustring's bytes
// are its UTF-8 encoding). null is a null ustring, buffer or vector. Hex keeps
// every line ASCII and lets a string carry bytes that are not valid UTF-8.
//
// The archives below only walk what the official classes ask for: the field
// order and the field types always come from the generated code in the jar.

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import org.apache.jute.BinaryInputArchive;
import org.apache.jute.BinaryOutputArchive;
import org.apache.jute.Index;
import org.apache.jute.InputArchive;
import org.apache.jute.OutputArchive;
import org.apache.jute.Record;

public final class JuteOracle {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "US-ASCII");
        for (String line; (line = in.readLine()) != null; ) {
            String reply;
            try {
                reply = "ok " + handle(line);
            } catch (Throwable e) {
                reply = "err " + (e.getClass().getSimpleName() + ": " + e.getMessage()).replaceAll("[\\r\\n]+", " ");
            }
            out.println(reply);
            out.flush();
        }
    }

    static String handle(String line) throws Exception {
        String[] f = line.split(" ", 3);
        switch (f[0]) {
        case "decode":
            return decode(newRecord(f[1]), Hex.decode(f[2]));
        case "encode":
            return encode(newRecord(f[1]), Json.parse(f[2]));
        case "about":
            return about(line.substring("about".length()).trim().split(" "));
        case "consts":
            return consts();
        default:
            throw new IllegalArgumentException("unknown request " + f[0]);
        }
    }

    static Record newRecord(String className) throws Exception {
        return (Record) Class.forName(className).getDeclaredConstructor().newInstance();
    }

    static String decode(Record r, byte[] b) throws IOException {
        ByteArrayInputStream bin = new ByteArrayInputStream(b);
        r.deserialize(BinaryInputArchive.getArchive(bin), "r");
        int consumed = b.length - bin.available();
        return consumed + " " + Hex.encode(binary(r)) + " " + Json.write(tree(r));
    }

    static String encode(Record r, Object tree) throws IOException {
        r.deserialize(new TreeIn(tree), "r");
        return Hex.encode(binary(r)) + " " + Json.write(tree(r));
    }

    static byte[] binary(Record r) throws IOException {
        ByteArrayOutputStream bout = new ByteArrayOutputStream();
        r.serialize(BinaryOutputArchive.getArchive(bout), "r");
        return bout.toByteArray();
    }

    static Object tree(Record r) throws IOException {
        TreeOut t = new TreeOut();
        r.serialize(t, "r");
        return t.root;
    }

    static String about(String[] classes) throws Exception {
        Map<String, Object> sources = new LinkedHashMap<>();
        for (String c : classes) {
            sources.put(c, Hex.encode(source(Class.forName(c)).getBytes(StandardCharsets.UTF_8)));
        }
        Class<?> version = Class.forName("org.apache.zookeeper.Version");
        sources.put(version.getName(), Hex.encode(source(version).getBytes(StandardCharsets.UTF_8)));
        Map<String, Object> m = new LinkedHashMap<>();
        String full = (String) version.getMethod("getFullVersion").invoke(null);
        m.put("version", Hex.encode(full.getBytes(StandardCharsets.UTF_8)));
        m.put("java", Hex.encode(System.getProperty("java.version").getBytes(StandardCharsets.UTF_8)));
        m.put("sources", sources);
        return Json.write(m);
    }

    static String source(Class<?> c) {
        java.security.CodeSource cs = c.getProtectionDomain().getCodeSource();
        return cs == null ? "" : cs.getLocation().toString();
    }

    // consts reads the opcodes and the special xids from the jar, so the Go
    // constants the proxy uses to pick a decoder can be checked too.
    static String consts() throws Exception {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("ops", intFields(Class.forName("org.apache.zookeeper.ZooDefs$OpCode"), ""));
        m.put("xids", intFields(Class.forName("org.apache.zookeeper.ClientCnxn"), "_XID"));
        return Json.write(m);
    }

    static Map<String, Object> intFields(Class<?> c, String suffix) throws IllegalAccessException {
        Map<String, Object> m = new TreeMap<>();
        for (Field f : c.getDeclaredFields()) {
            int mod = f.getModifiers();
            if (Modifier.isStatic(mod) && Modifier.isFinal(mod) && f.getType() == int.class && f.getName().endsWith(suffix)) {
                f.setAccessible(true);
                m.put(f.getName(), (long) f.getInt(null));
            }
        }
        return m;
    }

    // TreeOut records what a record's serialize writes, keyed by tag.
    static final class TreeOut implements OutputArchive {
        Object root;
        private final Deque<Object> stack = new ArrayDeque<>();

        @SuppressWarnings("unchecked")
        private void put(String tag, Object v) {
            Object top = stack.peek();
            if (top == null) {
                root = v;
            } else if (top instanceof List) {
                ((List<Object>) top).add(v);
            } else {
                ((Map<String, Object>) top).put(tag, v);
            }
        }

        public void writeByte(byte b, String tag) { put(tag, (long) b); }
        public void writeBool(boolean b, String tag) { put(tag, b); }
        public void writeInt(int i, String tag) { put(tag, (long) i); }
        public void writeLong(long l, String tag) { put(tag, l); }
        public void writeFloat(float f, String tag) { throw new UnsupportedOperationException("float field " + tag); }
        public void writeDouble(double d, String tag) { throw new UnsupportedOperationException("double field " + tag); }

        public void writeString(String s, String tag) {
            put(tag, s == null ? null : Hex.encode(s.getBytes(StandardCharsets.UTF_8)));
        }

        public void writeBuffer(byte[] buf, String tag) { put(tag, buf == null ? null : Hex.encode(buf)); }
        public void writeRecord(Record r, String tag) throws IOException { r.serialize(this, tag); }

        public void startRecord(Record r, String tag) {
            Map<String, Object> m = new LinkedHashMap<>();
            put(tag, m);
            stack.push(m);
        }

        public void endRecord(Record r, String tag) { stack.pop(); }

        // A null vector is written as null; the generated code still calls
        // endVector, so a list that nothing refers to stands in for it.
        public void startVector(List<?> v, String tag) {
            List<Object> l = new ArrayList<>();
            put(tag, v == null ? null : l);
            stack.push(l);
        }

        public void endVector(List<?> v, String tag) { stack.pop(); }
        public void startMap(TreeMap<?, ?> v, String tag) { throw new UnsupportedOperationException("map field " + tag); }
        public void endMap(TreeMap<?, ?> v, String tag) { throw new UnsupportedOperationException("map field " + tag); }

        // Abstract in OutputArchive from ZooKeeper 3.9 on, absent in 3.8:
        // no @Override, so the file compiles against both.
        public long getDataSize() { return 0; }
    }

    // TreeIn fills a record from a tree by tag. A field the record reads that
    // the tree lacks, or a field the tree has that the record never reads, is
    // an error naming it: the Go side built the tree from its own field names.
    static final class TreeIn implements InputArchive {
        private static final class Frame {
            final String path;
            Map<String, Object> obj;
            List<Object> arr;
            int next;
            final Set<String> used = new HashSet<>();

            Frame(String path) { this.path = path; }
        }

        private final Deque<Frame> stack = new ArrayDeque<>();

        TreeIn(Object root) {
            Frame f = new Frame("");
            f.arr = new ArrayList<>();
            f.arr.add(root);
            stack.push(f);
        }

        private Object take(String tag) throws IOException {
            Frame f = stack.peek();
            if (f.arr != null) {
                if (f.next >= f.arr.size()) {
                    throw new IOException(f.path + ": reads element " + f.next + " of " + f.arr.size());
                }
                return f.arr.get(f.next++);
            }
            if (!f.obj.containsKey(tag)) {
                throw new IOException(f.path + "." + tag + ": the official record reads this field; the Go record has none");
            }
            f.used.add(tag);
            return f.obj.get(tag);
        }

        private long number(String tag, long min, long max) throws IOException {
            Object v = take(tag);
            if (!(v instanceof Long) || (Long) v < min || (Long) v > max) {
                throw new IOException(tag + ": want a number in [" + min + ", " + max + "], got " + v);
            }
            return (Long) v;
        }

        private byte[] bytes(String tag) throws IOException {
            Object v = take(tag);
            if (v != null && !(v instanceof String)) {
                throw new IOException(tag + ": want hex or null, got " + v);
            }
            return v == null ? null : Hex.decode((String) v);
        }

        public byte readByte(String tag) throws IOException { return (byte) number(tag, Byte.MIN_VALUE, Byte.MAX_VALUE); }
        public int readInt(String tag) throws IOException { return (int) number(tag, Integer.MIN_VALUE, Integer.MAX_VALUE); }
        public long readLong(String tag) throws IOException { return number(tag, Long.MIN_VALUE, Long.MAX_VALUE); }
        public float readFloat(String tag) { throw new UnsupportedOperationException("float field " + tag); }
        public double readDouble(String tag) { throw new UnsupportedOperationException("double field " + tag); }

        public boolean readBool(String tag) throws IOException {
            Object v = take(tag);
            if (!(v instanceof Boolean)) {
                throw new IOException(tag + ": want a boolean, got " + v);
            }
            return (Boolean) v;
        }

        public String readString(String tag) throws IOException {
            byte[] b = bytes(tag);
            return b == null ? null : new String(b, StandardCharsets.UTF_8);
        }

        public byte[] readBuffer(String tag) throws IOException { return bytes(tag); }
        public void readRecord(Record r, String tag) throws IOException { r.deserialize(this, tag); }

        @SuppressWarnings("unchecked")
        public void startRecord(String tag) throws IOException {
            Object v = take(tag);
            if (!(v instanceof Map)) {
                throw new IOException(tag + ": want a record (object), got " + v);
            }
            Frame f = new Frame(stack.peek().path + "." + tag);
            f.obj = (Map<String, Object>) v;
            stack.push(f);
        }

        public void endRecord(String tag) throws IOException {
            Frame f = stack.pop();
            for (String k : f.obj.keySet()) {
                if (!f.used.contains(k)) {
                    throw new IOException(f.path + "." + k + ": the Go record has this field; the official record never reads it");
                }
            }
        }

        @SuppressWarnings("unchecked")
        public Index startVector(String tag) throws IOException {
            Object v = take(tag);
            if (v != null && !(v instanceof List)) {
                throw new IOException(tag + ": want a vector (array) or null, got " + v);
            }
            Frame f = new Frame(stack.peek().path + "." + tag);
            f.arr = v == null ? new ArrayList<>() : (List<Object>) v;
            stack.push(f);
            if (v == null) {
                return null;
            }
            return new Index() {
                public boolean done() { return f.next >= f.arr.size(); }
                public void incr() { } // each element read advances the frame
            };
        }

        public void endVector(String tag) throws IOException {
            Frame f = stack.pop();
            if (f.next != f.arr.size()) {
                throw new IOException(f.path + ": read " + f.next + " of " + f.arr.size() + " elements");
            }
        }

        public Index startMap(String tag) { throw new UnsupportedOperationException("map field " + tag); }
        public void endMap(String tag) { throw new UnsupportedOperationException("map field " + tag); }
    }

    static final class Hex {
        private static final char[] DIGITS = "0123456789abcdef".toCharArray();

        static String encode(byte[] b) {
            char[] c = new char[2 * b.length];
            for (int i = 0; i < b.length; i++) {
                c[2 * i] = DIGITS[(b[i] >> 4) & 0xf];
                c[2 * i + 1] = DIGITS[b[i] & 0xf];
            }
            return new String(c);
        }

        static byte[] decode(String s) {
            if (s.length() % 2 != 0) {
                throw new IllegalArgumentException("odd hex length " + s.length());
            }
            byte[] b = new byte[s.length() / 2];
            for (int i = 0; i < b.length; i++) {
                b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
            }
            return b;
        }
    }

    // Json reads and writes the tree subset above: objects, arrays, integers,
    // true, false, null, and strings without escapes (they only hold hex and
    // field names).
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) { this.s = s; }

        static Object parse(String s) {
            Json p = new Json(s);
            Object v = p.value();
            if (p.i != s.length()) {
                throw new IllegalArgumentException("trailing input at " + p.i);
            }
            return v;
        }

        private Object value() {
            char c = s.charAt(i);
            if (c == '{') {
                return object();
            }
            if (c == '[') {
                return array();
            }
            if (c == '"') {
                int end = s.indexOf('"', i + 1);
                String v = s.substring(i + 1, end);
                if (v.indexOf('\\') >= 0) {
                    throw new IllegalArgumentException("escape in string at " + i);
                }
                i = end + 1;
                return v;
            }
            for (String lit : new String[] {"null", "true", "false"}) {
                if (s.startsWith(lit, i)) {
                    i += lit.length();
                    return lit.equals("null") ? null : Boolean.valueOf(lit);
                }
            }
            int start = i;
            if (c == '-') {
                i++;
            }
            while (i < s.length() && Character.isDigit(s.charAt(i))) {
                i++;
            }
            return Long.parseLong(s.substring(start, i));
        }

        private Map<String, Object> object() {
            Map<String, Object> m = new LinkedHashMap<>();
            i++;
            while (s.charAt(i) != '}') {
                Object k = value();
                expect(':');
                m.put((String) k, value());
                if (s.charAt(i) == ',') {
                    i++;
                }
            }
            i++;
            return m;
        }

        private List<Object> array() {
            List<Object> l = new ArrayList<>();
            i++;
            while (s.charAt(i) != ']') {
                l.add(value());
                if (s.charAt(i) == ',') {
                    i++;
                }
            }
            i++;
            return l;
        }

        private void expect(char c) {
            if (s.charAt(i) != c) {
                throw new IllegalArgumentException("want '" + c + "' at " + i);
            }
            i++;
        }

        static String write(Object v) {
            StringBuilder b = new StringBuilder();
            write(b, v);
            return b.toString();
        }

        @SuppressWarnings("unchecked")
        private static void write(StringBuilder b, Object v) {
            if (v instanceof Map) {
                b.append('{');
                String sep = "";
                for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                    b.append(sep).append('"').append(e.getKey()).append("\":");
                    write(b, e.getValue());
                    sep = ",";
                }
                b.append('}');
            } else if (v instanceof List) {
                b.append('[');
                String sep = "";
                for (Object e : (List<Object>) v) {
                    b.append(sep);
                    write(b, e);
                    sep = ",";
                }
                b.append(']');
            } else if (v instanceof String) {
                b.append('"').append(v).append('"');
            } else {
                b.append(v); // Long, Boolean or null
            }
        }
    }
}
