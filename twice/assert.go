package twice

import (
	"context"
)

// TB is the part of a test that the assertions use; *testing.T, *testing.B
// and *rapid.T satisfy it.
type TB interface {
	Helper()
	Name() string
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// AssertIdempotent runs [Check] and stops the test (Fatalf) with the report
// when the job breaks a promise or the check cannot run.
func AssertIdempotent(tb TB, job Job, opts ...Option) {
	tb.Helper()
	assertIdempotent(tb, tb.Fatalf, job, opts)
}

// ExpectIdempotent is [AssertIdempotent] that lets the test go on (Errorf);
// it reports whether the job kept every promise.
func ExpectIdempotent(tb TB, job Job, opts ...Option) bool {
	tb.Helper()
	return assertIdempotent(tb, tb.Errorf, job, opts)
}

func assertIdempotent(tb TB, fail func(string, ...any), job Job, opts []Option) bool {
	tb.Helper()
	ctx := context.Background()
	if c, ok := tb.(interface{ Context() context.Context }); ok {
		ctx = c.Context()
	}
	opts = append(append([]Option{TestName(tb.Name()), KeepFailedDatabase()}, opts...), rapidOptions(tb)...)
	rep := Check(ctx, job, opts...)
	if len(rep.Nondeterministic) > 0 && verboseTests() {
		tb.Logf("%s", nondeterministicLine(rep))
	}
	if rep.KeptDatabase != "" {
		tb.Logf("twice: kept the check's database for inspection: %s", rep.KeptDatabase)
	}
	if rep.OK() {
		return true
	}
	fail("%s", failureText(tb, rep))
	return false
}
