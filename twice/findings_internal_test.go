package twice

import (
	"testing"

	"github.com/twicekit/twicekit/internal/findings"
)

// internal/findings reads how an attempt ended as twice's AttemptEnd,
// value for value.
func TestFindingsEndIsAttemptEnd(t *testing.T) {
	for e, want := range map[AttemptEnd]findings.End{
		EndReturned: findings.EndReturned, EndError: findings.EndError, EndCrashed: findings.EndCrashed,
		EndCrashedBeforeAck: findings.EndCrashedBeforeAck, EndPanic: findings.EndPanic,
		EndGoexit: findings.EndGoexit, EndHung: findings.EndHung, EndNotDelivered: findings.EndNotDelivered,
	} {
		if findings.End(e) != want {
			t.Errorf("%s is %d in twice, %d in internal/findings", e, e, want)
		}
	}
}
