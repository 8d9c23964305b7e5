// Package docnames keeps the prose honest about the code: it reads the Go
// names that README.md, README.zh.md and docs/*.md write in backticks and
// that look like this module's (`claims.Evidence`, `lock.Held.Suspensions`,
// `Held.Lost`, `refutedNow`, a name in the package table's row of its
// package, docs/layout.md), and says which of them the module does not
// declare. Its test runs it over the docs; it parses source only
// (go/parser), it starts nothing and runs nothing.
package docnames
