package srcread_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zk19/zk19/internal/proof/srcread"
)

// The reader runs from this directory: the module's fence package is two
// levels up.
var fenceDir = filepath.Join("..", "..", "..", "fence")

// TestSectionInSourceTellsTheResourceFromItsControl: fence's memory
// resource compares and writes in one section of its lock; fencetest's
// CheckThenWrite, the control, does not.
func TestSectionInSourceTellsTheResourceFromItsControl(t *testing.T) {
	why, err := srcread.SectionInSource(fenceDir, "Memory.Write", nil)
	if err != nil || why.En != "" {
		t.Fatalf("Memory.Write: got %q, %v; want one section, no error", why, err)
	}
	t.Logf("Memory.Write: one section")
	why, err = srcread.SectionInSource(filepath.Join(fenceDir, "fencetest"), "CheckThenWrite.Write", nil)
	if err != nil || why.En == "" {
		t.Fatalf("CheckThenWrite.Write: got %q, %v; want a reason it is not one section", why, err)
	}
	t.Logf("CheckThenWrite.Write: %s", why)
}

// TestSectionInSourceFollowsAnEditedCopy: with the lock let go right
// after the compare in a replaced resource.go, the reader says so.
func TestSectionInSourceFollowsAnEditedCopy(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(fenceDir, "resource.go"))
	if err != nil {
		t.Fatal(err)
	}
	const compare = "refused := s.admits(tok)\n"
	if strings.Count(string(b), compare) != 1 {
		t.Fatalf("fence/resource.go: got %d of %q; want one, where this test lets the lock go", strings.Count(string(b), compare), compare)
	}
	changed := strings.Replace(string(b), compare, compare+"\ts.mu.Unlock()\n", 1)
	why, err := srcread.SectionInSource(fenceDir, "Memory.Write", map[string]string{"resource.go": changed})
	if err != nil || !strings.HasPrefix(why.En, "the section is let go between the compare and the write") {
		t.Fatalf("Memory.Write with the lock let go after the compare: got %q, %v; want the section let go between the compare and the write", why, err)
	}
	t.Logf("Memory.Write with the lock let go after the compare: %s", why)
}

// TestTransactionInSourceOfTheDurableResource: fence's durable resource
// compares and writes in one transaction.
func TestTransactionInSourceOfTheDurableResource(t *testing.T) {
	t.Chdir(filepath.Join("..", "..", ".."))
	why, err := srcread.TransactionInSource(nil)
	if err != nil || why.En != "" {
		t.Fatalf("(*Durable).write: got %q, %v; want one transaction, no error", why, err)
	}
	why, err = srcread.AdvanceInSource(nil)
	if err != nil || why.En != "" {
		t.Fatalf("AdvanceMark: got %q, %v; want one statement, no error", why, err)
	}
	t.Logf("(*Durable).write: one transaction; AdvanceMark: one statement")
}
