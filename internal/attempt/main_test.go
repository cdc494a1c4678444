package attempt

import (
	"testing"

	"github.com/twicekit/twicekit/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Exit(m.Run()) }
