package twice

import (
	"cmp"
	"context"
	"time"

	"github.com/twicekit/twicekit/internal/report"
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
	return assertWatched(tb, fail, job, opts, defaultWatch, publishingFromEnv())
}

// assertWatched is assertIdempotent with the watch's and the publishing's
// settings.
func assertWatched(tb TB, fail func(string, ...any), job Job, opts []Option, w watchSettings, pub publishing) bool {
	tb.Helper()
	ctx := context.Background()
	if c, ok := tb.(interface{ Context() context.Context }); ok {
		ctx = c.Context()
	}
	p := &progress{}
	onPlan := func(line string) {
		if pub.Verbose {
			tb.Logf("%s", line)
		}
	}
	opts = append(append([]Option{TestName(tb.Name()), KeepFailedDatabase(), optionFunc(func(c *config) { c.Progress, c.OnPlan = p, onPlan })}, opts...), rapidOptions(tb)...)
	stop := watchCheck(tb, cmp.Or(job.Name, "job"), p, w)
	started := time.Now()
	rep := Check(ctx, job, opts...)
	stop()
	if pub.Verbose {
		report.LogProviderOnce(tb.Logf)
	}
	if rep.parallelNote != "" && pub.Verbose {
		tb.Logf("%s", rep.parallelNote)
	}
	if len(rep.Varying) > 0 && pub.Verbose {
		tb.Logf("%s", report.VaryingLine(rep.Job, rep.Varying))
	}
	if rep.KeptDatabase != "" {
		tb.Logf("twice: kept the check's database for inspection: %s%s", rep.KeptDatabase, rep.keptNote)
	}
	file, line := callSite()
	if err := pub.Publish(published(rep), file, line); err != nil {
		if pub.FailedFirst() {
			tb.Errorf("%v\n(twice could not publish this check's report, so CI would upload nothing of it: make -twice.report / TWICE_REPORT_DIR a directory the test can write, or unset it; later reports that cannot be written are logged only)", err)
		} else {
			tb.Logf("%v", err)
		}
	}
	if rep.OK() && rep.Partial() != "" && rep.partialOK == "" {
		fail("%s", rep.left().PartialText(rep.Job, len(rep.Scenarios))) // how a partial check that found nothing fails
		return false
	}
	if rep.OK() {
		if pub.Verbose {
			tb.Logf("%s", rep.Coverage())
		}
		return true
	}
	fail("%s", failureText(tb, rep, started))
	return false
}
