// Package fencescene holds the scenes of the article's §5 and §6 at the
// resource: the fencing cast (A and B contending for one lock, A cut off
// until its session expires), the fenced resources under test (memory and
// durable SQLite, opened by kind) and the writes and reads made on them,
// the workers parked between a check and a write, and the critical-section
// gate that holds a write at its decision so that another can be tried in
// the gap (F6). It builds on internal/proof/scene's lock Scene and on
// internal/proof/harness; F6's
// reading of the resources' source is internal/proof/srcread's.
package fencescene
