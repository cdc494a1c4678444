package twiceasynq

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// observedTable is docs/queues.md's table of what asynq did in the
// differential suite, written from asynq's outcomes (not the model's).
func observedTable(cases []diffCase, outcomes []outcome) string {
	var b strings.Builder
	b.WriteString("| case | task options | played as | deliveries (retry count each saw) | final state | the same task enqueued again |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	played := map[string]string{
		"once":              "enqueued once",
		"crash@end":         "the first worker dies after the handler, before its ack",
		"duplicate-enqueue": "enqueued again once the first ended",
	}
	for i, c := range cases {
		var opts []string
		for _, o := range c.opts {
			opts = append(opts, "`"+o.String()+"`")
		}
		var retries []string
		for _, d := range outcomes[i].Deliveries {
			if m := retryCount.FindStringSubmatch(d); m != nil {
				retries = append(retries, m[1])
			}
		}
		again := outcomes[i].Again
		if again == "" {
			again = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", c.name, strings.Join(opts, " "), played[c.token],
			strings.Join(retries, ", "), outcomes[i].State, again)
	}
	return b.String()
}

var retryCount = regexp.MustCompile(`retry_count=(\d+)`)

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
