package twicegue

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// observedTable is docs/queues.md's table of what gue's worker did in the
// differential suite, written from gue's outcomes (not the model's).
func observedTable(cases []gueCase, outcomes []string) string {
	var b strings.Builder
	b.WriteString("| case | deliveries logged in `j.Tx()` (error count each saw) | points | jobs left |\n")
	b.WriteString("| --- | --- | --- | --- |\n")
	for i, c := range cases {
		var counts []string
		for _, m := range errorCount.FindAllStringSubmatch(outcomes[i], -1) {
			counts = append(counts, m[1])
		}
		points := "?"
		if m := pointsOf.FindStringSubmatch(outcomes[i]); m != nil {
			points = m[1]
		}
		left := strings.Count(outcomes[i], "gue_jobs(")
		fmt.Fprintf(&b, "| %s | %s | %s | %d |\n", c.name, strings.Join(counts, ", "), points, left)
	}
	return b.String()
}

var (
	errorCount = regexp.MustCompile(`(?m)^deliveries\(error_count=(\d+)\)`)
	pointsOf   = regexp.MustCompile(`customers\(id=77, points=(\d+)\)`)
)

// checkDocsTable compares the block between <!-- name --> and
// <!-- /name --> in docs/queues.md with table; TWICE_WRITE_DOCS=1 writes
// it there instead.
func checkDocsTable(t *testing.T, name, table string) {
	t.Helper()
	const path = "../docs/queues.md"
	docs, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	begin, end := "<!-- "+name+" -->\n", "<!-- /"+name+" -->"
	before, rest, ok := strings.Cut(string(docs), begin)
	got, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("docs/queues.md has no %q ... %q block; put this table between them:\n%s", begin, end, table)
	}
	if got == table {
		return
	}
	if os.Getenv("TWICE_WRITE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(before+begin+table+end+after), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("docs/queues.md's %s table differs from what the engine did; rerun with TWICE_WRITE_DOCS=1 to write it, or paste:\n%s", name, table)
}
