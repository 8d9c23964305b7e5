// Package doc holds doc comments for TestDocCommentsStartWithTheirName.
package doc

// expireA is the comment the function had when it was unexported.
func ExpireA() {}

// Scene is named first, as it should be.
type Scene struct{}

// the comment of a type that names something else.
type Cast struct{}

// A Lease is named after an article, which counts.
type Lease struct{}

// unexported is not checked.
func unexported() {}
