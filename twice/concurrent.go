package twice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/twicekit/twicekit/concurrent"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/explore"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/thin"
)

// concurrency is what the concurrent scenarios of a check share: a worker
// per attempt (the check's own and a second one, both under the chosen
// isolation level) and the schedule of the scenario playing.
type concurrency struct {
	workers [2]*inject.Worker
	names   [2]string // the application_name of each worker's sessions ("": the check's worker)
}

// runConcurrent plays the concurrent scenarios: those of one job delivered
// twice at once (sameJob), then the concurrent duplicates (duplicateJobs),
// each unless switched off (config.pairOff); a concurrent token given to
// -twice.run replays that one scenario.
func (c *checker) runConcurrent(ctx context.Context, ref *ScenarioRun, lanes []*checker) ([]*ScenarioRun, error) {
	only := c.cfg.only
	if only != "" && !isConcurrentToken(only) {
		return nil, nil
	}
	if only != "" {
		p := sameJob
		if isDuplicateToken(only) {
			p = duplicateJobs
		}
		if why := c.cfg.pairOff(p); why != "" {
			return nil, usage(fmt.Errorf("twice: cannot replay %q: this check switched %s off (%s)", only, p.what, why))
		}
		s, ch, err := parseConcurrentToken(only, concurrentPoints(ref.Attempts[0].Points))
		if err != nil {
			return nil, err
		}
		sr, err := c.playScenario(ctx, s, ch)
		if err != nil {
			return nil, err
		}
		return []*ScenarioRun{sr}, nil
	}
	var pairs []concurrentPair
	for _, p := range []concurrentPair{sameJob, duplicateJobs} {
		if c.cfg.pairOff(p) != "" || (p.overlap == DuplicateOverlap && !c.cfg.duplicatesByDefault()) {
			continue
		}
		pairs = append(pairs, p)
	}
	n := len(concurrentPoints(ref.Attempts[0].Points))
	var out []*ScenarioRun
	for i, p := range pairs {
		// The wall budget keeps room for the first scenario of every kind
		// of the pairs after this one (internal/wall).
		reserve := 0
		for _, q := range pairs[i+1:] {
			reserve += q.kinds(n)
		}
		runs, err := c.explorePair(ctx, ref, lanes, p, reserve)
		if err != nil {
			return nil, err
		}
		out = append(out, runs...)
	}
	if c.wall != nil && len(out) == 0 && n > 0 && len(pairs) > 0 {
		c.wall.NoneFit()
	}
	return out, nil
}

// kinds is how many kinds of concurrent scenarios the pair plays for a job
// of n concurrent points: its overlaps (when n > 1) and its interleavings
// (unless it plays its overlaps only).
func (p concurrentPair) kinds(n int) int {
	k := 0
	if n > 1 {
		k++
	}
	if n > 0 && !p.overlapsOnly {
		k++
	}
	return k
}

// explorePair plays the concurrent scenarios of one pair of deliveries and
// returns what it saw of each (internal/explore): first the named overlaps,
// then, unless the pair plays its overlaps only, the interleavings. Inside
// rapid.Check (where every drawn input runs a whole check) only the
// overlaps run, unless WithBudget is given. With more than one lane
// (parallel.go) the overlaps and the PCT samples play on every lane at
// once. Under a wall budget (internal/wall) reserve scenarios' time is kept
// for the kinds still to come.
func (c *checker) explorePair(ctx context.Context, ref *ScenarioRun, lanes []*checker, p concurrentPair, reserve int) ([]*ScenarioRun, error) {
	cc := c.cfg.conc
	points := concurrentPoints(ref.Attempts[0].Points)
	n := len(points)
	if n == 0 {
		return nil, nil // nothing the attempts do can interleave
	}
	budget, err := cc.resolveBudget()
	if err != nil {
		return nil, usage(err)
	}
	overlaps := thin.KeepPoints(points, n-1, budget.OverlapPoints)
	if p.overlap == Overlap {
		c.leftOut.Overlaps, c.leftOut.OverlapPoints = len(overlaps), n-1
	}
	return explore.Pair[*checker, *ScenarioRun]{
		Own:   c,
		Lanes: lanes,
		N:     n,

		Overlaps: overlaps,
		// Inside rapid.Check every drawn input runs a whole check: only the
		// overlaps run there, unless WithBudget asks for more.
		OverlapsOnly: p.overlapsOnly || (c.cfg.pick != nil && cc.budget == nil),
		Budget:       budget.explore(n),
		Seed:         cc.scheduleSeed(),
		All:          cc.all,

		Wall:    c.wall,
		Reserve: reserve,

		Overlap: func(l *checker, k int) (*ScenarioRun, error) {
			return l.playScenario(ctx, Scenario{Kind: p.overlap, Point: k, Label: points[k-1].Label, Of: n}, sched.Overlap{K: k})
		},
		Interleave: func(l *checker, ch sched.Chooser) (*ScenarioRun, error) {
			return l.playScenario(ctx, Scenario{Kind: p.interleaved, Of: n}, ch)
		},
		Trace: func(sr *ScenarioRun) *sched.Trace { return sr.interleaving.trace },
		Broke: func(sr *ScenarioRun) bool { return compareRun(ref, sr, c.cfg) != nil },
		OverlapToken: func(k int) string {
			return Scenario{Kind: p.overlap, Point: k}.Token()
		},
	}.Run()
}

// parseConcurrentToken turns a replay token into its scenario and schedule.
func parseConcurrentToken(token string, points []faults.Step) (Scenario, sched.Chooser, error) {
	if rest, ok := strings.CutPrefix(token, "duplicate-"); ok {
		s, ch, err := parseConcurrentToken(rest, points)
		s.Kind = map[ScenarioKind]ScenarioKind{Overlap: DuplicateOverlap, Interleaved: DuplicateInterleaved}[s.Kind]
		return s, ch, err
	}
	n := len(points)
	if rest, ok := strings.CutPrefix(token, "overlap@"); ok {
		k, err := strconv.Atoi(rest)
		if err != nil || k < 1 || k >= n {
			if n < 2 {
				return Scenario{}, nil, usage(fmt.Errorf("twice: no concurrent scenario %q for this job: its reference run has %s, so it has no overlap scenarios (overlap@K pauses the first attempt after point K, 1 ≤ K < points)", token, count(n, "point")))
			}
			return Scenario{}, nil, usage(fmt.Errorf("twice: no concurrent scenario %q for this job: its reference run has %d points, so the overlaps are overlap@1 to overlap@%d", token, n, n-1))
		}
		return Scenario{Kind: Overlap, Point: k, Label: points[k-1].Label, Of: n}, sched.Overlap{K: k}, nil
	}
	rest, _ := strings.CutPrefix(token, "concurrent:")
	sch, err := sched.ParseSchedule(rest)
	if err != nil {
		return Scenario{}, nil, usage(fmt.Errorf("twice: no concurrent scenario %q: %w", token, err))
	}
	if sch.Attempts() > 2 {
		return Scenario{}, nil, usage(fmt.Errorf("twice: no concurrent scenario %q: the concurrent scenarios run two attempts, A and B", token))
	}
	return Scenario{Kind: Interleaved, Of: n, Schedule: sch.Token()}, sch, nil
}

// playScenario plays one concurrent scenario under the schedule ch, on the
// database reset to the seeded state as for every scenario.
func (c *checker) playScenario(ctx context.Context, s Scenario, ch sched.Chooser) (*ScenarioRun, error) {
	if err := c.concurrentWorkers(); err != nil {
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
	for _, w := range c.conc.workers {
		if w != c.worker {
			sr.Foreign = append(sr.Foreign, w.TakeForeign()...)
		}
	}
	return sr, nil
}

// concurrentWorkers makes the workers of the concurrent scenarios, once per
// check: the check's worker and a second one, or two new ones when the
// scenarios run under another isolation level or on another database/sql
// driver. New workers name their sessions (application_name), so the
// scheduler finds them even when the driver does not report backend PIDs.
// They close with the check.
func (c *checker) concurrentWorkers() error {
	if c.conc != nil {
		return nil
	}
	k := &concurrency{}
	iso := c.cfg.conc.isolation
	for i := range k.workers {
		if i == 0 && c.cfg.concurrentReusesCheckWorker() {
			k.workers[i] = c.worker
			continue
		}
		cfg := c.db.ConnConfig()
		params := map[string]string{}
		for key, v := range cfg.RuntimeParams {
			params[key] = v
		}
		k.names[i] = "twice-attempt-" + concurrent.Letter(i)
		params["application_name"] = k.names[i]
		if iso != ReadCommitted {
			params["default_transaction_isolation"] = strings.ToLower(iso.String())
		}
		cfg.RuntimeParams = params
		w, err := inject.NewWorkerConfigured(cfg, c.cfg.configurePool)
		if err != nil {
			return err
		}
		c.setUp.Watch(w)
		c.onClose(w.Close)
		if err := c.addHandles(w); err != nil {
			return err
		}
		if c.cfg.sqlOpen != nil {
			if err := c.useSQL(w, cfg); err != nil {
				return err
			}
		}
		k.workers[i] = w
	}
	c.conc = k
	return nil
}

// playConcurrent runs two attempts at once under the scheduler, of the job
// IDs jobs names (the same one twice, or both copies of a duplicate
// enqueue), then redelivers, one after the other, the attempts that crashed
// or returned an error (the losers of a unique violation, a serialization
// failure or a deadlock), as the queue would.
func (c *checker) playConcurrent(ctx context.Context, sr *ScenarioRun, jobs [2]string, chooser sched.Chooser) error {
	k := c.conc
	scheduler := sched.New(sched.Config{
		Attempts:   len(k.workers),
		Choose:     chooser,
		Locks:      sched.PostgresLocks(c.db.Pool(), k.names[:]...),
		StuckAfter: c.cfg.attemptTimeout,
	})
	ras := make([]*runningAttempt, len(k.workers))
	recs := make([]AttemptRecord, len(ras))
	done := make([]atomic.Bool, len(ras))
	var wg sync.WaitGroup
	start := func(i int) {
		plan := scheduler.Plan(i)
		plan.ImplicitTx = playsImplicitTx()
		ra := c.startAttempt(ctx, k.workers[i], jobs[i], c.next(sr, jobs[i]), plan)
		ras[i] = ra
		wg.Go(func() {
			// The scheduler reports a stuck attempt after AttemptTimeout
			// without progress; this bound only catches the scheduler itself.
			recs[i] = ra.wait(4*c.cfg.attemptTimeout, false)
			done[i].Store(true)
			scheduler.Returned(i)
		})
	}
	trace, err := scheduler.Run(ctx, start)
	var stuck *sched.StuckError
	var held map[int]heldLock
	if err != nil {
		reason := "the check stopped it: " + oneLine(err.Error())
		if errors.As(err, &stuck) {
			reason = "the check stopped it: " + letterList(stuck.Stuck) + " stuck"
			held = heldLocks(stuck, ras)
		}
		for i, ra := range ras {
			if ra != nil && !done[i].Load() {
				ra.run.Crash(reason)
			}
		}
		scheduler.Stop()
		wg.Wait()
		if stuck == nil {
			return fmt.Errorf("twice: internal error: scheduling the concurrent attempts: %w", err)
		}
	}
	wg.Wait()
	for i, ra := range ras {
		if ra == nil { // never started: the run got stuck before
			recs = recs[:i]
			break
		}
	}
	for i := range recs {
		c.afterAttempt(ctx, &recs[i], false)
	}
	sr.Attempts = append(sr.Attempts, recs...)
	sr.interleaving = &interleaving{trace: trace, isolation: c.cfg.conc.isolation, stuck: stuck, held: held}

	var failed []string
	for _, rec := range recs {
		switch {
		case rec.Panic != "" || rec.Goexit != "":
			sr.Problems = append(sr.Problems, abortProblem(rec, true))
		case rec.Hung:
			sr.Problems = append(sr.Problems, hungProblem(rec, 4*c.cfg.attemptTimeout))
		case len(rec.AfterRun) > 0:
			sr.Problems = append(sr.Problems, afterRunProblem(rec))
		case c.outcome(rec) != outcomeDone:
			failed = append(failed, rec.JobID)
		}
	}
	if stuck != nil {
		if len(held) == len(stuck.Stuck) {
			sr.Problems = append(sr.Problems, heldLockProblem(stuck, held, recs, c.cfg.attemptTimeout))
		} else {
			sr.Problems = append(sr.Problems, stuckProblem(stuck, recs, c.cfg.attemptTimeout))
		}
	}
	if len(sr.Problems) > 0 {
		return nil
	}
	for _, jobID := range failed {
		if !c.deliverOn(ctx, sr, k.workers[0], jobID, delivery{}) {
			break
		}
	}
	return nil
}
