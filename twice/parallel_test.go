package twice_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twicekit/twicekit/internal/longtest"
	"github.com/twicekit/twicekit/twice"
)

// reportBytes is what must not depend on how many scenarios play at once:
// the verdict, the scenarios that ran, the report text and the JSON.
func reportBytes(t *testing.T, rep *twice.Report) string {
	t.Helper()
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("ok=%v err=%v\nscenarios: %s\n%s\njson:\n%s", rep.OK(), rep.Err, strings.Join(rep.Tokens(), " "), rep.String(), js)
}

// TestParallelScenariosReportWhatTheSerialCheckReports checks buggy jobs
// and their fixed twins one scenario at a time and two at once, each on its
// own database: the verdict, the scenarios, the text and the JSON are the
// same, byte for byte, and the parallel check did use two databases. The
// cases cover the crash-state cache, a hang ending the check, overlaps that
// stop at the first broken promise and sampled interleavings, folded in
// order.
func TestParallelScenariosReportWhatTheSerialCheckReports(t *testing.T) {
	cases := []struct {
		job    twice.Job
		opts   []twice.Option
		broken bool
		long   bool // played with the long tests only: a repetition of a kind the others show
	}{
		{loyaltyJob("increment", incrementPoints), nil, true, false},
		{loyaltyJob("ledger two statements", ledgerTwoStatements), nil, true, true},
		{loyaltyJob("ledger CTE", ledgerCTE), nil, false, false},
		{ordersJob("send then mark", sendThenMark), nil, true, false},
		{ordersJob("mark then send", markThenSend), nil, true, true},
		{loyaltyJob("processed jobs", processedJobs), nil, true, true},
		{guardedStatements(12), []twice.Option{twice.EveryCrashPoint()}, false, false},
		{loyaltyJob("hangs when redelivered", hangsOnRedelivery), []twice.Option{twice.AttemptTimeout(time.Second)}, true, false},
		// Only two attempts at once catch it; its 5 points have more
		// interleavings than the budget, so the check samples them.
		{ledgerNoUniqueJob("check then act", checkThenAct), nil, true, false},
		{ledgerNoUniqueJob("check then act, every interleaving", checkThenAct), []twice.Option{twice.ExploreAllInterleavings()}, true, true},
		{ledgerNoUniqueJob("check then act, serializable", checkThenAct), []twice.Option{twice.Isolation(twice.Serializable), twice.ExploreAllInterleavings()}, false, true},
	}
	for _, c := range cases {
		t.Run(c.job.Name, func(t *testing.T) {
			if c.long {
				longtest.Skip(t, "the same comparison on another job of a kind already compared")
			}
			serial := twice.Check(t.Context(), c.job, append(c.opts, twice.Parallel(1))...)
			parallel := twice.Check(t.Context(), c.job, append(c.opts, twice.Parallel(2))...)
			if serial.Err != nil || serial.OK() == c.broken {
				t.Fatalf("the serial check of %s: want broken=%v, got:\n%s", c.job.Name, c.broken, serial.String())
			}
			if got := twice.LanesOf(parallel); got != 2 {
				t.Fatalf("Parallel(2) played on %d databases, want 2", got)
			}
			if want, got := reportBytes(t, serial), reportBytes(t, parallel); got != want {
				t.Fatalf("two scenarios at once changed the report of %s:\n--- serial\n%s\n--- parallel\n%s", c.job.Name, want, got)
			}
		})
	}
}

// TestParallelRefusesWhatIsNotANumberOfScenarios: Parallel(0) and a
// TWICE_PARALLEL that is no count stop the check with a message that says
// what to give.
func TestParallelRefusesWhatIsNotANumberOfScenarios(t *testing.T) {
	job := loyaltyJob("ledger CTE", ledgerCTE)
	rep := twice.Check(context.Background(), job, twice.Parallel(0))
	if rep.Err == nil || !strings.Contains(rep.Err.Error(), "Parallel(0): give how many scenarios to play at once, 1 or more") {
		t.Fatalf("Parallel(0): want a clear error, got %v", rep.Err)
	}
	t.Setenv("TWICE_PARALLEL", "many")
	rep = twice.Check(context.Background(), job)
	if rep.Err == nil || !strings.Contains(rep.Err.Error(), "TWICE_PARALLEL=many: give how many scenarios to play at once") {
		t.Fatalf("TWICE_PARALLEL=many: want a clear error, got %v", rep.Err)
	}
	t.Setenv("TWICE_PARALLEL", "2")
	if rep = twice.Check(context.Background(), job); rep.Err != nil || !rep.OK() || twice.LanesOf(rep) != 2 {
		t.Fatalf("TWICE_PARALLEL=2: want a passing check on 2 databases, got %d:\n%s", twice.LanesOf(rep), rep.String())
	}
}

// TestASmallRoomPlaysFewerScenariosAtOnce: on a server whose connection
// room fits the check and not one more lane, Parallel(3) plays one
// scenario at a time, says why (what go test -v logs), and reports what
// the serial check reports.
func TestASmallRoomPlaysFewerScenariosAtOnce(t *testing.T) {
	// 45 connections: 3 for superusers and 8 for pgfixture's admin pool
	// leave 34; the check takes 20 (its database and two workers).
	ctx, srv := privateServer(t, "max_connections=45")
	job := loyaltyJob("increment", incrementPoints)
	serial := twice.Check(ctx, job, twice.OnServer(srv))
	rep := twice.Check(ctx, job, twice.OnServer(srv), twice.Parallel(3))
	if got := twice.LanesOf(rep); got != 1 {
		t.Fatalf("Parallel(3) in a room of 34 connections played on %d databases, want 1", got)
	}
	if note := twice.ParallelNoteOf(rep); !strings.Contains(note, "playing 1 scenario at a time, not 3: the server's connection room (34 connections) has no free 20 for another database and its workers; raise max_connections") {
		t.Fatalf("want a note that says why, got %q", note)
	}
	if want, got := reportBytes(t, serial), reportBytes(t, rep); got != want {
		t.Fatalf("the report changed:\n--- serial\n%s\n--- parallel\n%s", want, got)
	}
}
