package report

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAbortText(t *testing.T) {
	require.Equal(t, "attempt 1 of job-1 called t.FailNow (or runtime.Goexit) at jobs_test.go:12: return an error from Run instead "+
		"(t.Fatal, t.FailNow and testify's require end the goroutine they run on, which is the attempt's, not the test's; the check stops here)",
		AbortText("attempt 1 of job-1", "jobs_test.go:12", "", false))
	require.Equal(t, "attempt 2 of job-1 panicked (a queue would redeliver it; the check stops here):\n  panic: boom\n      job()",
		AbortText("attempt 2 of job-1", "", "panic: boom\n    job()", true))
	require.Equal(t, "attempt 1 of job-1 panicked:\n  panic: boom", AbortText("attempt 1 of job-1", "", "panic: boom", false))
}

func TestStoppedAfterHangText(t *testing.T) {
	const tail = " (each would wait out AttemptTimeout the same way; fix the hang, then check again)"
	require.Equal(t, "not run after the hang in sequential: 5 more scenarios and the concurrent ones"+tail, StoppedAfterHangText("sequential", 5, true))
	require.Equal(t, "not run after the hang in crash@2: 1 more scenario"+tail, StoppedAfterHangText("crash@2", 1, false))
	require.Equal(t, "not run after the hang in crash@2: the concurrent scenarios"+tail, StoppedAfterHangText("crash@2", 0, true))
}

// VerdictName names twice's verdicts, and "not compared" for none.
func TestVerdictName(t *testing.T) {
	for v, want := range map[int]string{0: "not compared", 1: "kept", 2: "broken", 3: "not compared"} {
		if got := VerdictName(v); got != want {
			t.Errorf("VerdictName(%d) = %q, want %q", v, got, want)
		}
	}
}

// CouldNotRun says the error on one line.
func TestCouldNotRunIsOneLine(t *testing.T) {
	if got, want := CouldNotRun(errors.New("no\n  PostgreSQL\there")), "the check could not run: no PostgreSQL here"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got, want := CouldNotRun(nil), "the check could not run: "; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
