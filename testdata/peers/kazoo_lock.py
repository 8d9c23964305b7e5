#!/usr/bin/env python3
"""Drives kazoo's Lock recipe on command from a zk19 Go test (internal/proof/peer).

The protocol is JSON lines. Every request on stdin carries an "id" and a
"cmd"; exactly one reply line echoes the id, says ok or names kazoo's
exception, and gives the elapsed seconds. Each request is served on its own
thread, so a blocking acquire leaves cancel, state and children answerable.
Lines tagged "event" report what happened in between: kazoo's connection
state changes, every ZooKeeper call the recipe makes (invoke, then ok or
fail), and every watch that fires. The first line is the "hello" event; when
kazoo cannot be imported it says so ("missing") and the driver exits with
status 3. The protocol is testdata/peers/PROTOCOL.md.

The recipe is kazoo's own: the driver only observes the calls it makes, by
wrapping the client's methods, and never changes what they do.
"""
import functools
import json
import logging
import os
import sys
import threading
import time

T0 = time.monotonic()
_out = threading.Lock()


def emit(obj):
    line = json.dumps(obj, separators=(",", ":"), default=str)
    with _out:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def event(kind, **fields):
    fields.update(event=kind, t=round(time.monotonic() - T0, 6))
    emit(fields)


def error_of(exc):
    return {"class": type(exc).__name__, "message": str(exc)}


try:
    import kazoo
    from kazoo.client import KazooClient
    from kazoo.exceptions import NoNodeError
    from kazoo.protocol.states import KazooState
    from kazoo.version import __version__ as KAZOO_VERSION
except ImportError as exc:
    event("hello", missing=True, recipe="kazoo", runtime="python " + sys.version.split()[0],
          executable=sys.executable, error=error_of(exc))
    sys.exit(3)


def hexid(n):
    return "" if n is None else "0x%x" % n


# The lock recipe's calls are reported; the driver's own look-ups (children,
# state) use the unwrapped methods so they never appear as the recipe's.
TRACED = ("ensure_path", "create", "get", "get_children", "exists", "delete")


def traced(name, fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        path = args[0] if args else kwargs.get("path")
        args, kwargs, watch = with_watch_reported(name, args, kwargs)
        event("op", op=name, path=path, phase="invoke", watch=watch)
        try:
            result = fn(*args, **kwargs)
        except Exception as exc:
            event("op", op=name, path=path, phase="fail", error=error_of(exc))
            raise
        event("op", op=name, path=path, phase="ok", result=describe(name, result))
        return result
    return call


def with_watch_reported(name, args, kwargs):
    """Wraps the watch argument (positional or keyword) so it reports firing."""
    if name not in ("get", "get_children", "exists"):
        return args, kwargs, False
    if kwargs.get("watch") is not None:
        return args, dict(kwargs, watch=watched(kwargs["watch"])), True
    if len(args) > 1 and args[1] is not None:
        return (args[0], watched(args[1])) + tuple(args[2:]), kwargs, True
    return args, kwargs, False


def describe(name, result):
    if name == "get":
        data, stat = result
        return {"owner": hexid(stat.ephemeralOwner), "czxid": stat.czxid}
    if name == "exists":
        return None if result is None else {"owner": hexid(result.ephemeralOwner)}
    return result


_watchers = {}
_watchers_guard = threading.Lock()


def watched(fn):
    # kazoo keeps a path's watchers in a set, so a watcher passed twice fires
    # once. One wrapper per watcher (bound methods compare equal) keeps that.
    def fire(ev):
        event("watch", type=str(ev.type), state=str(ev.state), path=ev.path)
        return fn(ev)
    with _watchers_guard:
        return _watchers.setdefault(fn, fire)


class Driver:
    def __init__(self):
        self.client = None
        self.raw = {}
        self.locks = {}
        self.guard = threading.Lock()
        self.lost_seen = False

    def session(self):
        # client_id is None whenever the connection is down; the session the
        # client holds (and will try to resume) is what a test needs to see.
        return hexid(getattr(self.client, "_session_id", None)) if self.client else ""

    def on_state(self, state):
        # Called on kazoo's connection thread: report and return at once.
        if state == KazooState.LOST:
            self.lost_seen = True
        event("state", state=str(state), connected=state == KazooState.CONNECTED, session=self.session())

    def cmd_connect(self, req):
        if self.client is not None:
            raise RuntimeError("already connected; one driver is one client")
        client = KazooClient(hosts=req["hosts"], timeout=req.get("session_timeout", 10.0))
        self.raw = {name: getattr(client, name) for name in TRACED}
        for name in TRACED:
            setattr(client, name, traced(name, self.raw[name]))
        client.add_listener(self.on_state)
        self.client = client
        try:
            client.start(timeout=req.get("connect_timeout", 15.0))
        except Exception:
            self.client = None
            raise
        return self.cmd_state(req)

    def lock(self, req):
        path = req["path"]
        with self.guard:
            if path not in self.locks:
                self.locks[path] = self.client.Lock(path, req.get("identifier"))
            return self.locks[path]

    def lock_snapshot(self, req):
        """The Lock's fields, also for a reply whose command raised."""
        with self.guard:
            lk = self.locks.get(req.get("path"))
        if lk is None:
            return {}
        return {"prefix": lk.prefix, "node": lk.node, "is_acquired": lk.is_acquired}

    def cmd_lock(self, req):
        lk = self.lock(req)
        return {"prefix": lk.prefix, "node": lk.node, "is_acquired": lk.is_acquired}

    def cmd_acquire(self, req):
        lk = self.lock(req)
        got = lk.acquire(timeout=req.get("timeout"))
        return {"acquired": got, "node": lk.node, "prefix": lk.prefix, "is_acquired": lk.is_acquired}

    def cmd_release(self, req):
        lk = self.lock(req)
        released = lk.release()
        return {"released": released, "is_acquired": lk.is_acquired}

    def cmd_cancel(self, req):
        self.lock(req).cancel()
        return {}

    def cmd_is_acquired(self, req):
        lk = self.lock(req)
        return {"is_acquired": lk.is_acquired, "node": lk.node, "prefix": lk.prefix}

    def cmd_state(self, req):
        if self.client is None:
            return {"state": "", "keeper_state": "", "session": "", "connected": False, "lost_seen": False}
        return {"state": str(self.client.state), "keeper_state": str(self.client.client_state),
                "session": self.session(), "connected": self.client.connected, "lost_seen": self.lost_seen}

    def cmd_children(self, req):
        out = []
        for name in sorted(self.raw["get_children"](req["path"])):
            try:
                data, stat = self.raw["get"](req["path"] + "/" + name)
            except NoNodeError:
                out.append({"name": name, "gone": True})
                continue
            out.append({"name": name, "owner": hexid(stat.ephemeralOwner),
                        "data": data.decode("utf-8", "replace")})
        return {"children": out}

    def cmd_close(self, req):
        if self.client is not None:
            self.client.stop()
            self.client.close()
        return {}


def serve(driver, req):
    start = time.monotonic()
    reply = {"id": req.get("id"), "cmd": req.get("cmd")}
    try:
        handler = getattr(driver, "cmd_" + str(req.get("cmd")), None)
        if handler is None:
            raise ValueError("unknown command %r" % req.get("cmd"))
        if req.get("cmd") not in ("connect", "state", "close") and driver.client is None:
            raise RuntimeError("not connected: send connect first")
        reply.update(handler(req), ok=True)
    except Exception as exc:
        reply.update(driver.lock_snapshot(req), ok=False, error=error_of(exc))
    reply["elapsed"] = round(time.monotonic() - start, 6)
    emit(reply)


def main():
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    event("hello", recipe="kazoo", version=KAZOO_VERSION, library=os.path.dirname(kazoo.__file__),
          lock_object="Lock", runtime="python " + sys.version.split()[0], executable=sys.executable,
          pid=os.getpid(), node_name="{guid}__lock__", timeout=True, cancel=True)
    driver = Driver()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as exc:
            emit({"id": None, "ok": False, "error": error_of(exc), "elapsed": 0})
            continue
        worker = threading.Thread(target=serve, args=(driver, req), daemon=True)
        worker.start()
        if req.get("cmd") == "close":
            worker.join()
            break
    # Standard input closed (the test is gone) or close was served: leave
    # without waiting for kazoo's threads or blocked requests.
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
