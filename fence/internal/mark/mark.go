// Package mark is how package fence hands package fencetest the one
// operation of its resources it does not export: forgetting the mark
// (claim T4's wrong rule). Exporting it from fence would put a control on
// the page of the real resources; this package is internal to fence, so
// only fence and fencetest can reach it.
package mark

import "context"

// Clear forgets r's high-water mark and keeps its value, in the one
// critical section (or transaction) that r's writes use, and fails with
// fence.ErrClosed once r is closed. r is a *fence.Memory or a
// *fence.Durable. Package fence sets Clear when it is initialized, so it
// is set for every importer of fence; it is typed with any because this
// package cannot import fence, which imports it.
var Clear func(ctx context.Context, r any) error
