package report

import (
	"reflect"
	"testing"
)

// twinEvent and twinFinding are JSON types of twice's as Copy sees them:
// the same fields in the same order, under other names.
type twinEvent struct {
	Attempt, Type string
	Point         int
	Kind, Label   string
	On            string
	Crashed       bool
}

type twinFinding struct {
	Token, Kind, Headline string
	Timeline              []twinEvent
	Database              []JSONTableDiff
	Effects               []JSONMismatch
	Problems, Hints       []string
	Replay                string
}

// TestCopyConvertsFieldForFieldAndKeepsNil: Copy converts a finding to its
// twin and back to what it was, nil slices nil and empty ones empty.
func TestCopyConvertsFieldForFieldAndKeepsNil(t *testing.T) {
	f := JSONFinding{Token: "once", Timeline: []Event{{Attempt: "attempt 1 of job-1", Type: "point", Point: 1}},
		Effects: []JSONMismatch{}, Hints: []string{"h"}}
	twin := Copy[twinFinding](f)
	if twin.Token != "once" || len(twin.Timeline) != 1 || twin.Timeline[0].Point != 1 || twin.Database != nil || twin.Effects == nil {
		t.Fatalf("Copy gave %+v", twin)
	}
	if back := Copy[JSONFinding](twin); !reflect.DeepEqual(back, f) {
		t.Fatalf("round trip gave %+v, want %+v", back, f)
	}
	var none []JSONFinding
	if got := Copy[[]twinFinding](none); got != nil {
		t.Fatalf("a nil slice copied to %#v", got)
	}
	shard := &JSONShard{Index: 1, Of: 2}
	if got := Copy[*JSONShard](shard); got != shard {
		t.Fatalf("a pointer that converts is kept, got %p want %p", got, shard)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("a struct of other fields copied without a panic")
		}
	}()
	Copy[JSONShard](twinEvent{})
}

// TestMapIsNilForNone: Map maps in order, and nothing maps to nil.
func TestMapIsNilForNone(t *testing.T) {
	double := func(n int) int { return 2 * n }
	if got := Map([]int{1, 2}, double); !reflect.DeepEqual(got, []int{2, 4}) {
		t.Fatalf("got %v", got)
	}
	if got := Map([]int{}, double); got != nil {
		t.Fatalf("an empty slice mapped to %#v", got)
	}
}

type named int

func (n named) String() string { return [...]string{"zero", "one"}[n] }

// TestStringsIsNilForNone: Strings names each value by its key, and an
// empty map gives nil.
func TestStringsIsNilForNone(t *testing.T) {
	if got := Strings(map[string]named{"a": 0, "b": 1}); !reflect.DeepEqual(got, map[string]string{"a": "zero", "b": "one"}) {
		t.Fatalf("got %v", got)
	}
	if got := Strings(map[string]named{}); got != nil {
		t.Fatalf("an empty map gave %#v", got)
	}
}
