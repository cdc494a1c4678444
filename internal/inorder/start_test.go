package inorder

import (
	"errors"
	"slices"
	"testing"
)

// The lanes are made while the caller goes on; the extra ones are handed
// over once, even when making them failed half way.
func TestStart(t *testing.T) {
	var extra []int
	wait := Start(func() ([]int, string, error) { return []int{0, 1, 2}, "note", nil }, func(l int) { extra = append(extra, l) })
	for range 2 {
		lanes, note, err := wait()
		if !slices.Equal(lanes, []int{0, 1, 2}) || note != "note" || err != nil {
			t.Fatalf("got %v %q %v", lanes, note, err)
		}
	}
	if !slices.Equal(extra, []int{1, 2}) {
		t.Fatalf("extra lanes: %v", extra)
	}
	extra = nil
	boom := errors.New("boom")
	wait = Start(func() ([]int, string, error) { return []int{0, 1}, "", boom }, func(l int) { extra = append(extra, l) })
	if lanes, _, err := wait(); lanes != nil || !errors.Is(err, boom) || !slices.Equal(extra, []int{1}) {
		t.Fatalf("on an error: %v %v %v", lanes, err, extra)
	}
}

// Make makes up to n lanes, fewer with a note when there is no room, and
// returns those made so far on an error.
func TestMake(t *testing.T) {
	next, room := 0, 2
	more := func() (int, bool, error) {
		if next == room {
			return 0, false, nil
		}
		next++
		return next, true, nil
	}
	full := func(made int) string { return "made " + string(rune('0'+made)) }
	if lanes, note, err := Make(0, 1, more, full); !slices.Equal(lanes, []int{0}) || note != "" || err != nil {
		t.Fatalf("one: %v %q %v", lanes, note, err)
	}
	if lanes, note, err := Make(0, 5, more, full); !slices.Equal(lanes, []int{0, 1, 2}) || note != "made 3" || err != nil {
		t.Fatalf("no room: %v %q %v", lanes, note, err)
	}
	boom := errors.New("boom")
	fail := func() (int, bool, error) { return 0, false, boom }
	if lanes, _, err := Make(0, 3, fail, full); !slices.Equal(lanes, []int{0}) || !errors.Is(err, boom) {
		t.Fatalf("error: %v %v", lanes, err)
	}
}
