package rewards_test

import (
	"os"
	"strings"
	"testing"
)

// quickStart is the text of reward_test.go between its README:begin and
// README:end lines, without the blank lines around it.
func quickStart(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("reward_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "// README:begin\n")
	if !ok {
		t.Fatal("reward_test.go has no // README:begin line")
	}
	block, _, ok := strings.Cut(rest, "// README:end")
	if !ok {
		t.Fatal("reward_test.go has no // README:end line")
	}
	return strings.Trim(block, "\n") + "\n"
}

// TestReadmeShowsTheQuickStart keeps the README's quick start compiled: the
// fenced Go block after the README's <!-- README:quickstart --> marker must
// be reward_test.go's block, byte for byte.
func TestReadmeShowsTheQuickStart(t *testing.T) {
	want := quickStart(t)
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatalf("no README.md at the module root (%v): nothing to compare the quick start with", err)
	}
	const marker = "<!-- README:quickstart -->"
	_, after, ok := strings.Cut(string(b), marker)
	if !ok {
		t.Fatalf("README.md has no %s marker: paste examples/quickstart's block (see examples/README.md) after it, in a ```go fence", marker)
	}
	after = strings.TrimLeft(after, "\n")
	body, ok := strings.CutPrefix(after, "```go\n")
	if !ok {
		t.Fatalf("README.md: the line after %s must open a ```go fence; it is %q", marker, firstLine(after))
	}
	got, _, ok := strings.Cut(body, "```\n")
	if !ok {
		t.Fatalf("README.md: the ```go fence after %s is not closed", marker)
	}
	if got != want {
		t.Errorf("README.md's quick start differs from examples/quickstart/reward_test.go (the code shown must be the code tested).\nfirst difference at line %d:\n  README:         %q\n  reward_test.go: %q\n\nthe block to paste:\n%s",
			diffLine(got, want), lineAt(got, diffLine(got, want)), lineAt(want, diffLine(got, want)), want)
	}
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// diffLine is the first line (from 1) where a and b differ.
func diffLine(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i + 1
		}
	}
	return min(len(al), len(bl)) + 1
}

func lineAt(s string, n int) string {
	lines := strings.Split(s, "\n")
	if n-1 < len(lines) {
		return lines[n-1]
	}
	return "(end of block)"
}
