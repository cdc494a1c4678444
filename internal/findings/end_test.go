package findings

import "testing"

// EndOf: the first of what an attempt did that holds says how it ended.
func TestEndOfTakesTheFirstThatHolds(t *testing.T) {
	for _, tc := range []struct {
		got, want End
	}{
		{EndOf(true, true, true, true, true, true, true), EndNotDelivered},
		{EndOf(false, true, true, true, true, true, true), EndPanic},
		{EndOf(false, false, true, true, true, true, true), EndGoexit},
		{EndOf(false, false, false, true, true, true, true), EndHung},
		{EndOf(false, false, false, false, true, true, true), EndCrashedBeforeAck},
		{EndOf(false, false, false, false, false, true, true), EndCrashed},
		{EndOf(false, false, false, false, false, false, true), EndError},
		{EndOf(false, false, false, false, false, false, false), EndReturned},
	} {
		if tc.got != tc.want {
			t.Errorf("got %d, want %d", tc.got, tc.want)
		}
	}
}
