// Drives Apache Curator's InterProcessMutex on command from a zk19 Go test
// (internal/proof/peer), over the line protocol of testdata/peers/PROTOCOL.md.
//
// One JVM is one CuratorFramework, hence one session. Requests are JSON
// lines on stdin, each served on a thread of its own, so that a blocking
// acquire leaves cancel, state and children answerable; exactly one reply
// line per request echoes its id. Lines tagged "event" report what happened
// in between: the ConnectionStateListener's states (CONNECTED, SUSPENDED,
// RECONNECTED, LOST) and the ZooKeeper calls Curator's tracer reports.
//
// InterProcessMutex is bound to the thread that acquired it: release() and
// isOwnedByCurrentThread() only mean something on that thread. So every
// lock path gets an owner thread of its own, and acquire, release and the
// owner-side questions run there, one after the other. Cancel is
// Thread.interrupt() of that owner thread while it is in acquire; the
// timeout is acquire(time, unit).
//
// The recipe is Curator's own: the driver calls its public API and never
// changes what it does. It is compiled at test time with the JDK's javac
// against Debian's jars in /usr/share/java (libcurator-recipes-java and
// what it depends on), see internal/proof/peer/curator.go.
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.drivers.AdvancedTracerDriver;
import org.apache.curator.drivers.EventTrace;
import org.apache.curator.drivers.OperationTrace;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public final class CuratorLock {
    private static final long T0 = System.nanoTime();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Object OUT = new Object();

    static void emit(Map<String, Object> m) {
        String line;
        try {
            line = JSON.writeValueAsString(m);
        } catch (Exception e) {
            line = "{\"event\":\"unprintable\",\"error\":\"" + e.getClass().getSimpleName() + "\"}";
        }
        synchronized (OUT) {
            System.out.println(line);
            System.out.flush();
        }
    }

    static double since(long t0) {
        return Math.round((System.nanoTime() - t0) / 1e3) / 1e6;
    }

    static void event(String kind, Map<String, Object> fields) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("event", kind);
        m.put("t", since(T0));
        m.putAll(fields);
        emit(m);
    }

    static Map<String, Object> errorOf(Throwable e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("class", e.getClass().getSimpleName());
        m.put("message", String.valueOf(e.getMessage()));
        return m;
    }

    static String hex(long id) {
        return "0x" + Long.toHexString(id);
    }

    static Map<String, Object> map(Object... kv) {
        Map<String, Object> m = new LinkedHashMap<>();
        for (int i = 0; i + 1 < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    // What the jar on the class path says its version is.
    static String curatorVersion() {
        try (InputStream in = InterProcessMutex.class.getResourceAsStream(
                "/META-INF/maven/org.apache.curator/curator-recipes/pom.properties")) {
            if (in != null) {
                Properties p = new Properties();
                p.load(in);
                return p.getProperty("version", "unknown");
            }
        } catch (Exception ignore) {
            // reported as unknown
        }
        return "unknown";
    }

    static String jarOf(Class<?> c) {
        try {
            return java.nio.file.Paths.get(c.getProtectionDomain().getCodeSource().getLocation().toURI())
                    .toRealPath().toString();
        } catch (Exception e) {
            return "unknown";
        }
    }

    /** The lock on one path, and the thread that owns it. */
    static final class Owner {
        final Mutex mutex;
        final ExecutorService thread;
        volatile Thread self;
        volatile boolean acquiring;

        Owner(CuratorFramework client, String path) {
            mutex = new Mutex(client, path);
            thread = Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "owner " + path);
                t.setDaemon(true);
                self = t;
                return t;
            });
        }

        <T> T run(Callable<T> task) throws Exception {
            try {
                return thread.submit(task).get();
            } catch (ExecutionException e) {
                Throwable c = e.getCause();
                if (c instanceof Exception) {
                    throw (Exception) c;
                }
                throw e;
            }
        }

        /** The lock object's own account, asked on the owner thread. */
        Map<String, Object> snapshot() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("is_acquired", mutex.isAcquiredInThisProcess());
            m.put("owned", mutex.isOwnedByCurrentThread());
            m.put("node", mutex.node());
            return m;
        }
    }

    /** InterProcessMutex with its own lock path readable (getLockPath is protected). */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String node() {
            String p = getLockPath();
            return p == null ? "" : p.substring(p.lastIndexOf('/') + 1);
        }
    }

    private volatile CuratorFramework client;
    private final Map<String, Owner> owners = new ConcurrentHashMap<>();
    private final AtomicReference<String> lastState = new AtomicReference<>("");
    private final List<String> states = Collections.synchronizedList(new ArrayList<>());
    private volatile boolean lostSeen;

    long sessionId() {
        try {
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            return zk == null ? 0 : zk.getSessionId();
        } catch (Exception e) {
            return 0;
        }
    }

    Map<String, Object> connect(Map<String, Object> req) throws Exception {
        if (client != null) {
            throw new IllegalStateException("already connected; one driver is one client");
        }
        int session = (int) Math.round(num(req, "session_timeout", 10.0) * 1000);
        int connection = (int) Math.round(num(req, "connection_timeout", 2.0) * 1000);
        int baseSleep = (int) Math.round(num(req, "retry_base_sleep", 0.2) * 1000);
        int retries = (int) num(req, "retry_max", 3);
        CuratorFramework c = CuratorFrameworkFactory.builder()
                .connectString((String) req.get("hosts"))
                .sessionTimeoutMs(session)
                .connectionTimeoutMs(connection)
                .retryPolicy(new ExponentialBackoffRetry(baseSleep, retries))
                .build();
        CountDownLatch heard = new CountDownLatch(1);
        c.getConnectionStateListenable().addListener((cf, s) -> {
            lastState.set(s.name());
            states.add(s.name());
            if (s == ConnectionState.LOST) {
                lostSeen = true;
            }
            event("state", map("state", s.name(), "connected", s.isConnected(), "session", hex(sessionId())));
            heard.countDown();
        });
        c.getZookeeperClient().setTracerDriver(new Tracer());
        client = c;
        c.start();
        // Connected, and the listener told so: the reply's state is the
        // listener's, as every later one is.
        long wait = Math.round(num(req, "connect_timeout", 15.0) * 1000);
        if (!c.blockUntilConnected((int) wait, TimeUnit.MILLISECONDS) || !heard.await(wait, TimeUnit.MILLISECONDS)) {
            throw new KeeperException.ConnectionLossException();
        }
        Map<String, Object> out = state(req);
        out.put("config", String.format("ExponentialBackoffRetry(%d ms, %d), session timeout %d ms, connection timeout %d ms",
                baseSleep, retries, session, connection));
        return out;
    }

    static double num(Map<String, Object> req, String key, double dflt) {
        Object v = req.get(key);
        return v instanceof Number ? ((Number) v).doubleValue() : dflt;
    }

    Owner owner(Map<String, Object> req) {
        String path = (String) req.get("path");
        return owners.computeIfAbsent(path, p -> new Owner(client, p));
    }

    Map<String, Object> lock(Map<String, Object> req) throws Exception {
        Owner o = owner(req);
        return o.run(o::snapshot);
    }

    Map<String, Object> acquire(Map<String, Object> req) throws Exception {
        Owner o = owner(req);
        Object timeout = req.get("timeout");
        return o.run(() -> {
            boolean got;
            o.acquiring = true;
            try {
                if (timeout instanceof Number) {
                    long ms = Math.round(((Number) timeout).doubleValue() * 1000);
                    got = o.mutex.acquire(ms, TimeUnit.MILLISECONDS);
                } else {
                    o.mutex.acquire();
                    got = true;
                }
            } finally {
                o.acquiring = false;
                // A cancel's interrupt must not outlive the acquire it
                // ended, or the owner thread's next task would see it.
                Thread.interrupted();
            }
            Map<String, Object> m = o.snapshot();
            m.put("acquired", got);
            return m;
        });
    }

    Map<String, Object> release(Map<String, Object> req) throws Exception {
        Owner o = owner(req);
        return o.run(() -> {
            o.mutex.release();
            Map<String, Object> m = o.snapshot();
            m.put("released", true);
            return m;
        });
    }

    Map<String, Object> cancel(Map<String, Object> req) {
        Owner o = owner(req);
        boolean interrupted = false;
        if (o.acquiring && o.self != null) {
            o.self.interrupt();
            interrupted = true;
        }
        return map("interrupted", interrupted);
    }

    Map<String, Object> isAcquired(Map<String, Object> req) throws Exception {
        Owner o = owner(req);
        if (o.acquiring) {
            // The owner thread is inside acquire: the lock object holds
            // nothing for it until acquire returns.
            return map("is_acquired", o.mutex.isAcquiredInThisProcess(), "owned", false, "node", "", "owner_busy", true);
        }
        return o.run(o::snapshot);
    }

    Map<String, Object> state(Map<String, Object> req) {
        if (client == null) {
            return map("state", "", "keeper_state", "", "session", "", "connected", false, "lost_seen", false);
        }
        String keeper = "";
        try {
            keeper = client.getZookeeperClient().getZooKeeper().getState().name();
        } catch (Exception e) {
            keeper = "unknown: " + e.getClass().getSimpleName();
        }
        List<String> seen;
        synchronized (states) {
            seen = new ArrayList<>(states);
        }
        return map("state", lastState.get(), "keeper_state", keeper, "session", hex(sessionId()),
                "connected", client.getZookeeperClient().isConnected(), "lost_seen", lostSeen, "states", seen);
    }

    // The driver's own look at the lock dir, through the raw ZooKeeper
    // handle so that it is never reported as the recipe's call.
    Map<String, Object> children(Map<String, Object> req) throws Exception {
        String path = (String) req.get("path");
        ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
        List<String> names = new ArrayList<>(zk.getChildren(path, false));
        Collections.sort(names);
        List<Map<String, Object>> out = new ArrayList<>();
        for (String name : names) {
            Stat st = new Stat();
            try {
                byte[] data = zk.getData(path + "/" + name, false, st);
                out.add(map("name", name, "owner", hex(st.getEphemeralOwner()),
                        "data", data == null ? "" : new String(data, StandardCharsets.UTF_8)));
            } catch (KeeperException.NoNodeException e) {
                out.add(map("name", name, "gone", true));
            }
        }
        return map("children", out);
    }

    Map<String, Object> close(Map<String, Object> req) {
        if (client != null) {
            client.close();
        }
        return map();
    }

    /** Reports each ZooKeeper call Curator traces, once it has returned. */
    static final class Tracer extends AdvancedTracerDriver {
        @Override
        public void addTrace(OperationTrace t) {
            Map<String, Object> m = map("op", t.getName(), "path", t.getPath(), "watch", t.isWithWatcher(),
                    "latency_ms", t.getLatencyMs());
            if (t.getReturnCode() == 0) {
                m.put("phase", "ok");
            } else {
                m.put("phase", "fail");
                m.put("error", map("class", KeeperException.Code.get(t.getReturnCode()).name(), "message", ""));
            }
            event("op", m);
        }

        @Override
        public void addEvent(EventTrace t) {
            // counters; not part of the history
        }
    }

    Map<String, Object> dispatch(String cmd, Map<String, Object> req) throws Exception {
        if (!cmd.equals("connect") && !cmd.equals("state") && !cmd.equals("close") && client == null) {
            throw new IllegalStateException("not connected: send connect first");
        }
        switch (cmd) {
            case "connect": return connect(req);
            case "lock": return lock(req);
            case "acquire": return acquire(req);
            case "release": return release(req);
            case "cancel": return cancel(req);
            case "is_acquired": return isAcquired(req);
            case "state": return state(req);
            case "children": return children(req);
            case "close": return close(req);
            default: throw new IllegalArgumentException("unknown command " + cmd);
        }
    }

    void serve(Map<String, Object> req) {
        long start = System.nanoTime();
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("id", req.get("id"));
        reply.put("cmd", req.get("cmd"));
        String cmd = String.valueOf(req.get("cmd"));
        try {
            reply.putAll(dispatch(cmd, req));
            reply.put("ok", true);
        } catch (Throwable e) {
            reply.putAll(snapshotAfterFailure(req));
            reply.put("ok", false);
            reply.put("error", errorOf(e));
        }
        reply.put("elapsed", since(start));
        emit(reply);
    }

    // The lock object's account after a command raised, asked on its owner
    // thread, so that a failed release says what the lock believes now.
    Map<String, Object> snapshotAfterFailure(Map<String, Object> req) {
        Object path = req.get("path");
        Owner o = path == null ? null : owners.get(path);
        if (o == null || o.acquiring) {
            return map();
        }
        try {
            return o.run(o::snapshot);
        } catch (Exception e) {
            return map();
        }
    }

    public static void main(String[] args) throws Exception {
        event("hello", map("recipe", "curator", "version", curatorVersion(),
                "library", jarOf(InterProcessMutex.class),
                "lock_object", "InterProcessMutex",
                "zookeeper_client", org.apache.zookeeper.Version.getFullVersion(),
                "runtime", "java " + System.getProperty("java.version"),
                "executable", System.getProperty("java.home") + "/bin/java",
                "pid", ProcessHandle.current().pid(),
                "node_name", "_c_{uuid}-lock-",
                "timeout", true, "cancel", true));
        CuratorLock driver = new CuratorLock();
        ExecutorService workers = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "request");
            t.setDaemon(true);
            return t;
        });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().isEmpty()) {
                continue;
            }
            Map<String, Object> req;
            try {
                @SuppressWarnings("unchecked")
                Map<String, Object> parsed = JSON.readValue(line, Map.class);
                req = parsed;
            } catch (Exception e) {
                emit(map("id", null, "ok", false, "error", errorOf(e), "elapsed", 0));
                continue;
            }
            Future<?> f = workers.submit(() -> driver.serve(req));
            if ("close".equals(req.get("cmd"))) {
                f.get();
                break;
            }
        }
        // Standard input closed (the test is gone) or close was served:
        // leave without waiting for Curator's threads or blocked requests.
        System.out.flush();
        Runtime.getRuntime().halt(0);
    }
}
