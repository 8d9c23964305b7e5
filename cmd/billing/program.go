// Command billing holds a ZooKeeper lock and writes through a fence:
// go run . -zk 127.0.0.1:2181
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
	// Your store: fence.NewDurable(ctx, db) on SQLite or PostgreSQL, or one
	// behind fence/fencehttp. A memory resource keeps this runnable.
	resource := fence.NewMemory()
	if err := Work(ctx, conn, "/services/billing/lock", resource, []string{"a", "b", "c"}); err != nil {
		log.Fatal(err)
	}
	value, mark, _, err := resource.Read(ctx)
	fmt.Printf("stored %q under token %v (%v)\n", value, mark, err)
}

// Work holds the lock at parent and writes values with the hold's token;
// the resource refuses a token below its mark, whatever the timing.
func Work(ctx context.Context, conn *zk.Conn, parent string, resource fence.Resource, values []string) error {
	// WithParents creates a missing parent (a container). Acquire waits for a
	// session and retries what a caller would (a lost reply, a lost link).
	held, err := lock.New(conn, parent, lock.WithParents()).Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire %s: %w", parent, err)
	}
	for _, v := range values {
		// Ready before each write: it waits out a suspension (within ctx) and
		// refuses, every time, once the hold is known lost.
		if err = held.Ready(ctx); err != nil {
			break
		}
		// A write in flight when the hold is lost has its context cancelled.
		if _, err = resource.Write(held.Context(), held.Token, v); err != nil {
			break
		}
	}
	switch stale := (*fence.StaleError)(nil); {
	case errors.As(err, &stale):
		err = fmt.Errorf("refused, the lock has passed on (mark %v); never retry with this token: %w", stale.Mark, err)
	case err != nil && held.Err() != nil && ctx.Err() == nil:
		err = fmt.Errorf("lock lost: %w", err)
	}
	// Release is bounded even without a deadline. A hold already over, or a
	// delete that goes on by itself, leaves nothing to do.
	rerr := held.Release(context.WithoutCancel(ctx))
	if rerr != nil && !errors.Is(rerr, lock.ErrAlreadyOver) && !errors.Is(rerr, lock.ErrOutcomeUnknown) {
		err = errors.Join(err, fmt.Errorf("release: %w", rerr))
	}
	return err
}
