package history

import (
	"context"
	"fmt"
	"hash/maphash"
	"os"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"
)

var seed = maphash.MakeSeed()

// newModel returns the porcupine model of a string register whose value is
// initially initial. Inputs and outputs must be Input and Output values; an
// Output with Unknown set is accepted for any operation (a Write with an
// unknown outcome that porcupine linearizes took effect; one that never took
// effect is linearized after every other operation, harmlessly).
func newModel(initial string) porcupine.Model {
	return porcupine.Model{
		Init: func() any { return initial },
		Step: func(state, input, output any) (bool, any) {
			in, out := input.(Input), output.(Output)
			switch in.Op {
			case Write:
				return true, in.Value
			case Read:
				return out.Unknown || out.Value == state.(string), state
			default:
				return false, state
			}
		},
		Equal: func(a, b any) bool { return a.(string) == b.(string) },
		Hash:  func(state any) uint64 { return maphash.String(seed, state.(string)) },
		DescribeOperation: func(input, output any) string {
			in, out := input.(Input), output.(Output)
			var s string
			if in.Op == Write {
				s = "write(" + strconv.Quote(in.Value) + ")"
			} else {
				s = "read()"
				if !out.Unknown {
					s += " -> " + strconv.Quote(out.Value)
				}
			}
			if out.Unknown {
				s += " -> ?"
			}
			return s
		},
		DescribeState: func(state any) string { return strconv.Quote(state.(string)) },
	}
}

// Verdict is the outcome of Check.
type Verdict int

// Verdicts.
const (
	// Unknown means the check timed out or was canceled.
	Unknown Verdict = iota
	// Linearizable means porcupine found a linearization.
	Linearizable
	// NotLinearizable means no linearization exists.
	NotLinearizable
)

// String returns "unknown", "linearizable" or "not linearizable".
func (v Verdict) String() string {
	switch v {
	case Linearizable:
		return "linearizable"
	case NotLinearizable:
		return "not linearizable"
	default:
		return "unknown"
	}
}

// Chinese is the verdict in the Chinese record's words (zh.Chinese).
func (v Verdict) Chinese() string {
	switch v {
	case Linearizable:
		return "可线性化"
	case NotLinearizable:
		return "不可线性化"
	default:
		return "未知"
	}
}

// Check reports whether ops, a history of the register with the given
// initial value (as built by Recorder.Operations), is linearizable. A
// timeout of 0 means none. The returned info can be passed to
// WriteVisualization. If ctx ends first the verdict is Unknown and the error
// is ctx.Err(); a timeout yields Unknown with a nil error. Malformed
// operations (inputs or outputs not of type Input and Output) are reported
// as an error.
func Check(ctx context.Context, ops []porcupine.Operation, initial string, timeout time.Duration) (Verdict, porcupine.LinearizationInfo, error) {
	for i, op := range ops {
		in, ok1 := op.Input.(Input)
		_, ok2 := op.Output.(Output)
		if !ok1 || !ok2 || (in.Op != Read && in.Op != Write) {
			return Unknown, porcupine.LinearizationInfo{}, fmt.Errorf("history: operation %d: want Input/Output with a read or write, got %T/%T", i, op.Input, op.Output)
		}
		if op.Return < op.Call {
			return Unknown, porcupine.LinearizationInfo{}, fmt.Errorf("history: operation %d returns at %d before its call at %d", i, op.Return, op.Call)
		}
	}
	if err := ctx.Err(); err != nil {
		return Unknown, porcupine.LinearizationInfo{}, err
	}
	// Once ctx ends every step fails, which makes the search unwind
	// quickly. Only Illegal can be caused by that, so an Ok result is
	// still trustworthy.
	model := newModel(initial)
	step := model.Step
	model.Step = func(state, input, output any) (bool, any) {
		if ctx.Err() != nil {
			return false, state
		}
		return step(state, input, output)
	}
	res, info := porcupine.CheckOperationsVerbose(model, ops, timeout)
	switch {
	case res == porcupine.Ok:
		return Linearizable, info, nil
	case ctx.Err() != nil:
		return Unknown, info, ctx.Err()
	case res == porcupine.Illegal:
		return NotLinearizable, info, nil
	default:
		return Unknown, info, nil
	}
}

// writeVisualization writes porcupine's HTML visualization of info, as
// returned by Check for a register with the given initial value, to f, and
// closes f.
func writeVisualization(f *os.File, initial string, info porcupine.LinearizationInfo) error {
	if err := porcupine.Visualize(newModel(initial), info, f); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
