package concurrent_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/concurrent"
)

func TestSchedulePreemptions(t *testing.T) {
	for token, want := range map[string]int{"A": 0, "A3B2": 0, "AB3A2": 1, "ABAB": 2, "ABA": 1, "B2A2": 0} {
		s, err := concurrent.ParseSchedule(token)
		require.NoError(t, err)
		require.Equal(t, want, s.Preemptions(), token)
		require.Equal(t, token, s.String())
	}
	require.Equal(t, "A", concurrent.Letter(0))
	require.Equal(t, "attempt(26)", concurrent.Letter(26))
}
