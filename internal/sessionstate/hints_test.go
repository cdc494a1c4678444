package sessionstate

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Hints give one hint per state found, naming the attempts that found it,
// and the last says what it means.
func TestHintsNameTheAttemptsPerState(t *testing.T) {
	require.Empty(t, Hints([]Started{{Name: "attempt 1 of job-1"}}))
	hints := Hints([]Started{
		{Name: "attempt 1 of job-1"},
		{Name: "attempt 2 of job-1", State: "temporary table t is left"},
		{Name: "attempt 3 of job-1", State: "temporary table t is left"},
		{Name: "attempt 4 of job-1", State: "SET search_path is left"},
	})
	require.Len(t, hints, 2)
	require.Equal(t, "attempt 2 of job-1 and attempt 3 of job-1 started on a session where temporary table t is left", hints[0])
	require.True(t, strings.HasPrefix(hints[1], "attempt 4 of job-1 started on a session where SET search_path is left: a production pool"), hints[1])
}
