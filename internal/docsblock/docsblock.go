// Package docsblock keeps a block of a Markdown page equal to what a test
// computed: the tables of docs/river.md and docs/queues.md that the
// differential suites write from what the real engines did.
//
// A block stands between the lines <!-- NAME --> and <!-- /NAME -->.
// TWICE_WRITE_DOCS=1 rewrites a block that differs instead of failing.
package docsblock

import (
	"os"
	"strings"
	"testing"
)

// Check fails t when the block NAME of the page at path is not want, and
// says how to rewrite it. Under TWICE_WRITE_DOCS=1 it writes want there.
func Check(t testing.TB, path, name, want string) {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+" -->\n", "<!-- /"+name+" -->"
	before, rest, ok := strings.Cut(string(page), begin)
	got, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("%s has no %q ... %q block; put this between them:\n%s", path, begin, end, want)
	}
	if got == want {
		return
	}
	if os.Getenv("TWICE_WRITE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(before+begin+want+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the %s block of %s differs from what the engine did; rerun the test with TWICE_WRITE_DOCS=1 to write it, or paste:\n%s", name, path, want)
}
