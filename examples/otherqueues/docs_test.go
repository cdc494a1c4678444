package otherqueues_test

import (
	"os"
	"strings"
	"testing"
)

// TestDocsShowTheCompiledCode keeps docs/queues.md's code blocks compiled:
// the fenced Go block after <!-- otherqueues:NAME --> must be the text of
// FILE between its "// docs:begin NAME" and "// docs:end NAME" lines.
func TestDocsShowTheCompiledCode(t *testing.T) {
	docs, err := os.ReadFile("../../docs/queues.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ name, file string }{
		{"asynq", "asynq_test.go"},
		{"gue", "gue_test.go"},
		{"own", "ownqueue_test.go"},
	} {
		src, err := os.ReadFile(b.file)
		if err != nil {
			t.Fatal(err)
		}
		_, rest, ok := strings.Cut(string(src), "// docs:begin "+b.name+"\n")
		block, _, ok2 := strings.Cut(rest, "// docs:end "+b.name)
		if !ok || !ok2 {
			t.Fatalf("%s needs a // docs:begin %s line and a // docs:end %s line", b.file, b.name, b.name)
		}
		want := strings.Trim(block, "\n") + "\n"
		marker := "<!-- otherqueues:" + b.name + " -->\n```go\n"
		_, after, ok := strings.Cut(string(docs), marker)
		if !ok {
			t.Errorf("docs/queues.md has no %q: paste %s's block after it:\n%s", marker, b.file, want)
			continue
		}
		got, _, ok := strings.Cut(after, "```\n")
		if !ok {
			t.Errorf("docs/queues.md: the ```go fence after <!-- otherqueues:%s --> is not closed", b.name)
			continue
		}
		if got != want {
			t.Errorf("docs/queues.md's %s block differs from examples/otherqueues/%s; the block to paste:\n%s", b.name, b.file, want)
		}
	}
}
