package twice_test

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/twice"
)

// fakeTB records what an assertion did, with Errorf and Fatalf apart.
type fakeTB struct {
	name   string
	errors []string
	fatals []string
	logs   []string
}

func (f *fakeTB) Helper()      {}
func (f *fakeTB) Name() string { return f.name }
func (f *fakeTB) Logf(format string, args ...any) {
	f.logs = append(f.logs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errors = append(f.errors, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) {
	f.fatals = append(f.fatals, fmt.Sprintf(format, args...))
}

func (f *fakeTB) String() string {
	return "errors: " + strings.Join(f.errors, "\n---\n") + "\nfatals: " + strings.Join(f.fatals, "\n---\n")
}

// problems is the text of a finding's problems, as the report prints them.
func problems(f twice.Finding) []string {
	var out []string
	for _, p := range f.Problems {
		out = append(out, p.Text)
	}
	return out
}
