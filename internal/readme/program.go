// Package readme is the program the README shows first ("Use the recipe and
// the fence in your service"), compiled and run: TestTheReadmeShowsThisProgram
// fails when the README's first Go block and this file after its package
// clause differ.
package readme

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-zookeeper/zk"

	"github.com/zk19/zk19/fence"
	"github.com/zk19/zk19/lock"
)

// Work holds the lock at parent (persistent; conn is your *zk.Conn) and
// writes values to resource (a fence.Resource, e.g. fence.NewDurable(ctx, db)),
// each carrying the hold's token: the resource refuses a token below its mark,
// whatever the timing, so nothing is checked before a write.
func Work(ctx context.Context, conn *zk.Conn, parent string, resource fence.Resource, values []string) error {
	held, err := lock.New(conn, parent).Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire %s: %w", parent, err)
	}
	work, stop := context.WithCancel(ctx)
	defer stop()
	go func() { // Lost: the hold is over; stop starting writes (one in flight is fenced)
		select {
		case <-held.Lost():
			stop()
		case <-work.Done():
		}
	}()
	for _, v := range values {
		_, err = resource.Write(work, held.Token, v)
		if err != nil {
			break
		}
	}
	var stale *fence.StaleError
	switch {
	case errors.As(err, &stale): // refused: a later holder wrote; never retry with this token
		err = fmt.Errorf("write refused, the lock has passed on (mark %v): %w", stale.Mark, err)
	case err != nil && work.Err() != nil && ctx.Err() == nil:
		err = fmt.Errorf("lock lost: %w", err)
	}
	if rerr := held.Release(context.WithoutCancel(ctx)); rerr != nil && !errors.Is(rerr, lock.ErrLostCandidacy) {
		err = errors.Join(err, fmt.Errorf("release: %w", rerr))
	}
	return err
}
