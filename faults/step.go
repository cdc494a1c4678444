package faults

import (
	"fmt"
	"strings"
)

// Kind says what a point is.
type Kind int

// The kinds of points.
const (
	// SQL is a statement sent through the attempt's database handles.
	SQL Kind = iota + 1
	// Effect is a call to an external effect client (mailer, provider, webhook).
	Effect
	// Explicit is a call to [Point].
	Explicit
)

func (k Kind) String() string {
	switch k {
	case SQL:
		return "sql"
	case Effect:
		return "effect"
	case Explicit:
		return "point"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Step is a point an attempt reached: its 1-based index within the attempt,
// its kind and a short, deterministic label (SQL with whitespace folded and
// shortened, the effect's description, or the explicit point's name).
type Step struct {
	Index int
	Kind  Kind
	Label string
	// Backend is the PostgreSQL backend PID that will run an SQL point (0
	// otherwise). A scheduler uses it to ask whether the statement is blocked;
	// it is never printed.
	Backend uint32
}

func (s Step) String() string {
	return fmt.Sprintf("%d %s", s.Index, s.Label)
}

// maxLabel is how long a label may get before it is shortened.
const maxLabel = 96

// Label folds whitespace and shortens text to a one-line label.
func Label(text string) string {
	s := strings.Join(strings.Fields(text), " ")
	if r := []rune(s); len(r) > maxLabel {
		s = string(r[:maxLabel-1]) + "…"
	}
	return s
}
