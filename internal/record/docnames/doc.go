// Package docnames keeps the prose honest about the code: it reads the Go
// names that README.md, README.zh.md and docs/*.md write in backticks and
// that look like this module's (`claims.Evidence`, `lock.Held.Suspensions`,
// `Held.Lost`, `refutedNow`, a name in the package table's row of its
// package, docs/layout.md), and says which of them the module does not
// declare; and the paths they write under a top directory of the module
// (`internal/server/wait`, `lock/recover.go`), and says which do not exist. Every
// page is checked alike: a run's report, which quotes the code of its
// commit, is kept outside the tree. Its test runs it over the docs, and
// holds docs/architecture.md, the house's map, to naming every package and
// drawing each on the layer its imports put it (Layers); it parses source
// only (go/parser), it starts nothing and runs nothing.
package docnames
