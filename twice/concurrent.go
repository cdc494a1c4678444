package twice

import (
	"cmp"
	"context"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/concurrentplay"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/sessions"
)

// runConcurrent plays the concurrent scenarios (internal/concurrentplay):
// those of one job delivered twice at once (sameJob), then the concurrent
// duplicates (duplicateJobs), each unless switched off (options.Config.PairOff); a
// concurrent token given to -twice.run replays that one scenario. Inside
// rapid.Check (where every drawn input runs a whole check) only the
// overlaps run, unless WithBudget is given. With more than one lane
// (parallel.go) the overlaps and the PCT samples play on every lane at
// once.
func (c *checker) runConcurrent(ctx context.Context, ref *ScenarioRun, lanes []*checker) ([]*ScenarioRun, error) {
	only := c.cfg.Only
	if only != "" && !isConcurrentToken(only) {
		return nil, nil
	}
	return concurrentplay.Check[*checker, *ScenarioRun]{
		Own:    c,
		Lanes:  lanes,
		Points: concurrentPoints(ref.Attempts[0].Points),

		Only:          only,
		OnlyDuplicate: isDuplicateToken(only),

		Pairs: [2]concurrentplay.Pair{sameJob, duplicateJobs},
		Off:   c.cfg.ConcurrentOff(),

		Budget: func(n int) (int, sched.Budget, error) {
			b, err := c.cfg.resolveBudget()
			if err != nil {
				return 0, sched.Budget{}, err
			}
			return b.OverlapPoints, b.explore(n), nil
		},
		OverlapsOnly: c.cfg.pick != nil && c.cfg.budget == nil,
		Seed:         concurrentplay.Seed(c.cfg.Conc.Seed),
		All:          c.cfg.Conc.All,

		Wall: c.Wall,
		LeftOut: func(overlaps, points int) {
			c.LeftOut.Overlaps, c.LeftOut.OverlapPoints = overlaps, points
		},

		Play: func(l *checker, s concurrentplay.Scenario, ch sched.Chooser) (*ScenarioRun, error) {
			return l.playScenario(ctx, concurrentScenario(s), ch)
		},
		Trace: func(sr *ScenarioRun) *sched.Trace { return sr.interleaving.trace },
		Broke: func(sr *ScenarioRun) bool { return compareRun(ref, sr, c.cfg) != nil },
		Token: func(s concurrentplay.Scenario) string { return concurrentScenario(s).Token() },
		Usage: usage,
	}.Run()
}

// concurrentScenario is a concurrent scenario as twice names it.
func concurrentScenario(s concurrentplay.Scenario) Scenario { return scenarioOf(s.Scenario()) }

// playScenario plays one concurrent scenario under the schedule ch, on the
// database reset to the seeded state as for every scenario.
func (c *checker) playScenario(ctx context.Context, s Scenario, ch sched.Chooser) (*ScenarioRun, error) {
	if err := c.ConcurrentWorkers(); err != nil {
		return nil, err
	}
	sr, err := c.scenario(ctx, s, playArgs{chooser: ch})
	if err != nil {
		return nil, err
	}
	if (s.Kind == Interleaved || s.Kind == DuplicateInterleaved) && s.Schedule == "" {
		// The interleaving that ran, as a token that replays it. A run that
		// got stuck before its first decision replays under any schedule.
		sr.Scenario.Schedule = cmp.Or(sr.interleaving.trace.Token(), "A")
	}
	for _, w := range c.Concurrent.Workers {
		if w != c.Worker {
			sr.Foreign = append(sr.Foreign, w.TakeForeign()...)
		}
	}
	return sr, nil
}

// playConcurrent runs two attempts at once under the scheduler, of the job
// IDs jobs names (the same one twice, or both copies of a duplicate
// enqueue), then redelivers, one after the other, the attempts that crashed
// or returned an error, as the queue would (concurrentplay.Play).
func (c *checker) playConcurrent(ctx context.Context, sr *ScenarioRun, jobs [2]string, chooser sched.Chooser) error {
	k := c.Concurrent
	return concurrentplay.Play[*runningAttempt, AttemptRecord, Problem]{
		Attempts:   len(k.Workers),
		Choose:     chooser,
		Pool:       c.DB.Pool(),
		Names:      k.Names[:],
		StuckAfter: c.cfg.AttemptTimeout,
		Start: func(i int, plan inject.Plan) *runningAttempt {
			return c.startAttempt(ctx, k.Workers[i], jobs[i], c.next(sr, jobs[i]), plan)
		},
		// The scheduler reports a stuck attempt after AttemptTimeout
		// without progress; this bound only catches the scheduler itself.
		Wait: func(ra *runningAttempt) AttemptRecord { return ra.wait(4*c.cfg.AttemptTimeout, false) },

		After: func(rec *AttemptRecord) { c.afterAttempt(ctx, rec, false) },
		Record: func(p concurrentplay.Played[AttemptRecord]) {
			sr.Attempts = append(sr.Attempts, p.Recs...)
			sr.interleaving = &interleaving{trace: p.Trace, isolation: IsolationLevel(c.cfg.Conc.Isolation), stuck: p.Stuck, held: p.Held}
		},
		Ended: func(rec AttemptRecord) (Problem, bool, bool) {
			switch {
			case rec.Panic != "" || rec.Goexit != "":
				return abortProblem(rec, true), true, false
			case rec.Hung:
				return hungProblem(rec, 4*c.cfg.AttemptTimeout), true, false
			case len(rec.AfterRun) > 0:
				return afterRunProblem(rec), true, false
			}
			return Problem{}, false, c.outcome(rec) == outcomeDone
		},
		Name:      attemptName,
		Stuck:     func(text string) Problem { return Problem{Kind: ProblemStuck, Text: text} },
		Add:       func(p Problem) { sr.Problems = append(sr.Problems, p) },
		Redeliver: func(rec AttemptRecord) bool { return c.deliverOn(ctx, sr, k.Workers[0], rec.JobID, delivery{}) },
	}.Run(ctx)
}

// implicitTxOff switches off playing autocommit statements as their
// implicit transactions in the concurrent scenarios (export_test.go).
var implicitTxOff = &concurrentplay.ImplicitTxOff

// concurrentPoints is what one attempt of a concurrent scenario goes
// through, from the reference run's points before the ack
// (concurrentplay.Points).
func concurrentPoints(ref []faults.Step) []faults.Step {
	return concurrentplay.Points(ref[:pointsBeforeAck(ref)])
}

// interleaving is what the scheduler did in one concurrent scenario.
type interleaving struct {
	trace     *sched.Trace
	isolation IsolationLevel
	stuck     *sched.StuckError
	held      map[int]sessions.HeldLock // the stuck attempts that waited on a lock of one that returned (lockholder.go)
}

// stuckNote is the timeline's word for stuck attempt i.
func (it *interleaving) stuckNote(i int) string {
	return concurrentplay.StuckNote(it.held, it.stuck, i)
}

// Timeline returns the timeline of the scenario with this token among those
// that ran, whether or not it broke a promise (a passing interleaving can be
// worth reading too); false when no such scenario ran.
func (r *Report) Timeline(token string) (string, bool) {
	for _, sr := range r.Scenarios {
		if sr.Scenario.Token() == token {
			return timeline(sr), true
		}
	}
	return "", false
}
