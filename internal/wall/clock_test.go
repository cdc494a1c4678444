package wall

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestANilClockIsNoBound: without a wall budget every scenario has room,
// and nothing is said left out.
func TestANilClockIsNoBound(t *testing.T) {
	var w *Clock
	require.True(t, w.Room(1000, true))
	require.Empty(t, w.LeftText(nil))
}
