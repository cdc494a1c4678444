package twicetemporal_test

import (
	"context"
	"strings"
	"testing"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicetemporal"
)

// An activity Temporal would refuse is refused before any scenario runs,
// with a message that says what to do.
func TestBadActivitiesAreRefused(t *testing.T) {
	t.Parallel()
	add := func(a *twice.Attempt) any { return (&Counter{Pool: a.Pool}).Add }
	for _, c := range []struct {
		name string
		act  twicetemporal.Activity
		want string
	}{
		{"no activity", twicetemporal.Activity{Schema: schema}, "set Activity.Activity"},
		{"nil activity", twicetemporal.Activity{Schema: schema, Activity: func(*twice.Attempt) any { return nil }}, "returned nil"},
		{"not a function", twicetemporal.Activity{Schema: schema, Activity: func(*twice.Attempt) any { return 7 }}, "returned a int, not a function"},
		{"no error", twicetemporal.Activity{Schema: schema, Activity: func(*twice.Attempt) any { return func(context.Context) int { return 1 } }}, "must return an error"},
		{"too few args", twicetemporal.Activity{Schema: schema, Activity: add}, "takes 1 arguments after its context, and Activity.Args has 0"},
		{"wrong type", twicetemporal.Activity{Schema: schema, Activity: add, Args: []any{"1"}}, "Activity.Args[0] is a string, and the activity's parameter 2 is a int"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rep := twicetemporal.Check(t.Context(), c.act)
			if rep.Err == nil || !strings.Contains(rep.Err.Error(), c.want) {
				t.Errorf("Err = %v, want it to say %q", rep.Err, c.want)
			}
			tb := &recorder{name: t.Name()}
			if twicetemporal.ExpectIdempotent(tb, c.act) || !strings.Contains(tb.text, c.want) {
				t.Errorf("ExpectIdempotent failed with %q, want it to say %q", tb.text, c.want)
			}
		})
	}
}
