package checkrun

import (
	"errors"
	"fmt"
	"testing"
)

func TestUsageIsTheUsersMistake(t *testing.T) {
	if Usage(nil) != nil {
		t.Error("Usage(nil) is not nil")
	}
	err := errors.New("twice: unknown budget")
	u := Usage(err)
	if u.Error() != err.Error() || !errors.Is(u, err) || !IsUsage(u) || !IsUsage(fmt.Errorf("wrapped: %w", u)) {
		t.Errorf("Usage(%v) = %v", err, u)
	}
	if IsUsage(err) || Keep(true, true, false, u) {
		t.Error("a plain error is a usage error, or a usage error keeps the database")
	}
}
