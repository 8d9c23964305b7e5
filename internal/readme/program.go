// Command billing holds a ZooKeeper lock and writes through a fence. Run it
// against a server: go run . -zk 127.0.0.1:2181
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/lock"
)

func main() {
	servers := flag.String("zk", "127.0.0.1:2181", "ZooKeeper servers, comma-separated")
	parent := flag.String("lock", "/services/billing/lock", "the lock's parent node, created if missing")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	// The session timeout is given once: the Locker reads the negotiated one,
	// and when the server last heard this client, from the connection.
	conn, _, err := lock.Connect(strings.Split(*servers, ","), 10*time.Second, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	// Your store: fence.NewDurable(ctx, db) on your database, or a remote
	// one behind fence/fencehttp. A memory resource keeps this runnable.
	resource := fence.NewMemory()
	defer resource.Close()
	if err := Work(ctx, conn, *parent, resource, []string{"a", "b", "c"}); err != nil {
		log.Fatal(err)
	}
	value, mark, _, err := resource.Read(ctx)
	fmt.Printf("stored %q under token %v (%v)\n", value, mark, err)
}

// Work holds the lock at parent and writes values to resource, each
// carrying the hold's token: the resource refuses a token below its mark,
// whatever the timing. Before each write, Ready says whether to start it:
// nil while the hold is good; while the connection is down it waits for
// the session to come back (within ctx); once the hold is known lost it
// refuses, every time. A write in flight when the hold is lost gets a
// cancelled context (held.Context), and the fence refuses it if it still
// lands after the next holder's first write.
func Work(ctx context.Context, conn *zk.Conn, parent string, resource fence.Resource, values []string) error {
	// WithParents creates the parent (a container) if it is missing. Acquire
	// waits for a session while the client has none, and retries what a
	// caller would (a lost create reply, a lost connection) itself.
	held, err := lock.New(conn, parent, lock.WithParents()).Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire %s: %w", parent, err)
	}
	for _, v := range values {
		if err = held.Ready(ctx); err != nil {
			break
		}
		if _, err = resource.Write(held.Context(), held.Token, v); err != nil {
			break
		}
	}
	var stale *fence.StaleError
	switch {
	case errors.As(err, &stale): // refused: a later holder wrote; never retry with this token
		err = fmt.Errorf("write refused, the lock has passed on (mark %v): %w", stale.Mark, err)
	case err != nil && held.Err() != nil && ctx.Err() == nil:
		err = fmt.Errorf("lock lost: %w", err)
	}
	// Release is bounded even under a context without a deadline. The hold
	// already over (ErrAlreadyOver), or a delete that goes on by itself
	// (ErrOutcomeUnknown), leaves nothing to do.
	rerr := held.Release(context.WithoutCancel(ctx))
	if rerr != nil && !errors.Is(rerr, lock.ErrAlreadyOver) && !errors.Is(rerr, lock.ErrOutcomeUnknown) {
		err = errors.Join(err, fmt.Errorf("release: %w", rerr))
	}
	return err
}
