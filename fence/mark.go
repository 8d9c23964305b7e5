package fence

import (
	"context"
	"fmt"

	"github.com/zk19/zk19/fence/internal/mark"
)

// Forgetting the mark is a control, not part of the fence: package
// fencetest offers it, and this hands it over without exporting it here.
func init() { mark.Clear = clearMark }

func clearMark(ctx context.Context, r any) error {
	switch r := r.(type) {
	case *Memory:
		return r.s.clearMark(ctx)
	case *Durable:
		return r.clearMark(ctx)
	}
	return fmt.Errorf("fence: clear the mark: got %T; want *fence.Memory or *fence.Durable", r)
}
