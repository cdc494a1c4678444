package otherqueues_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeShowsTheOtherQueues keeps the README's "Other queues" block
// compiled: the fenced Go block after <!-- README:otherqueues --> must be
// queues_test.go's text between its README:begin and README:end lines.
func TestReadmeShowsTheOtherQueues(t *testing.T) {
	src, err := os.ReadFile("queues_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(src), "// README:begin\n")
	block, _, ok2 := strings.Cut(rest, "// README:end")
	if !ok || !ok2 {
		t.Fatal("queues_test.go needs a // README:begin line and a // README:end line")
	}
	want := strings.Trim(block, "\n") + "\n"
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- README:otherqueues -->\n```go\n"
	_, after, ok := strings.Cut(string(readme), marker)
	if !ok {
		t.Fatalf("README.md has no %q: paste queues_test.go's block after it", marker)
	}
	got, _, ok := strings.Cut(after, "```\n")
	if !ok {
		t.Fatal("README.md: the ```go fence of the other queues is not closed")
	}
	if got != want {
		t.Errorf("README.md's other-queues block differs from examples/otherqueues/queues_test.go; the block to paste:\n%s", want)
	}
}
