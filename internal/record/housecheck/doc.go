// Package housecheck holds the house's own checks, each a test over the
// module's source and docs that parses and starts nothing (the README
// program's run is cmd/billing's):
//
//   - the prose is honest about the code: it reads the Go names that
//     README.md, README.zh.md and docs/*.md write in backticks and that
//     look like this module's (`claims.Evidence`, `lock.Held.Suspensions`,
//     `Held.Lost`, `refutedNow`, a name in the package table's row of its
//     package, docs/layout.md), and says which of them the module does not
//     declare; and the paths they write under a top directory of the module
//     (`internal/server/tb`, `lock/recover.go`), and says which do not
//     exist. Every page is checked alike: a run's report, which quotes the
//     code of its commit, is kept outside the tree;
//   - docs/architecture.md, the house's map, names every package and draws
//     each on the layer its imports put it (Layers), and the wings keep
//     their order: the server wing imports nothing of the proof's or the
//     record's, no import runs back up a layer or between the rooms of a
//     wing, and no package of internal/ is under 200 lines of code;
//   - functions stay short (Long lists those over a bound: 60 lines for
//     cmd/, internal/, lock/, fence/, locktest/ and zktest/), and in the
//     same trees every exported name's doc comment starts with that name;
//   - the READMEs keep their shape (headings, sentence lengths, commands,
//     links).
package housecheck
