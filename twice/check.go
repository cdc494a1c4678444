package twice

import (
	"context"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/checkrun"
	"github.com/twicekit/twicekit/internal/checkstate"
	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/crashstates"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/internal/scenarios"
	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/sessions"
	"github.com/twicekit/twicekit/internal/shard"
	"github.com/twicekit/twicekit/internal/wall"
	"github.com/twicekit/twicekit/pgfixture"
)

// checker is one check (or one of its lanes): its state
// (internal/checkstate), its options and its job.
type checker struct {
	checkstate.State[Attempt]
	cfg *config
	job Job
}

// Check runs job once on a fresh database as the reference, then in every
// scenario (ack lost, a crash before each point and after the last, a
// duplicate enqueue), each on the same database reset to the seeded state
// (the seed runs once), and compares each with the reference. It returns the
// report; it never fails a test by itself. Its database is handed back
// afterwards unless KeepFailedDatabase is given and the check failed.
func Check(ctx context.Context, job Job, opts ...Option) *Report {
	cfg := newConfig(opts)
	if job.Name == "" {
		job.Name = "job"
	}
	rep := &Report{Job: job.Name, testName: cfg.TestName, dupEnqueueOff: cfg.DupEnqueueOff, concurrencyOff: cfg.Conc.Off, overlapsOff: cfg.Conc.OverlapsOff, options: optionsOf(cfg)}
	if rep.Err = checkrun.Validate(job.Run != nil, cfg.MaxDeliveries, cfg.AttemptTimeout); rep.Err != nil {
		return rep
	}
	parallel, err := cfg.ResolveParallel()
	if err != nil {
		rep.Err = usage(err)
		return rep
	}
	sh, err := cfg.ResolveShard()
	if err != nil {
		rep.Err = usage(err)
		return rep
	}
	if sh.N > 1 && cfg.Only == "" {
		rep.shard = &shard.Run{Shard: sh, Concurrent: sh.Owns(shard.ConcurrentToken)}
	}
	started := time.Now()
	c, err := newChecker(ctx, job, cfg)
	if err != nil {
		rep.Err = checkrun.SetUpErr(ctx, err)
		return rep
	}
	c.Started = started
	defer func() {
		keep := checkrun.Keep(!rep.OK(), cfg.KeepFailed, cfg.pick != nil, rep.Err)
		if keep {
			rep.KeptDatabase = c.DB.URL()
			rep.keptNote = checkrun.KeptNote(c.Srv.Mode())
		}
		if err := c.Close(context.WithoutCancel(ctx), keep); err != nil && rep.Err == nil {
			rep.Err = checkrun.CloseErr(err)
		}
		if err := usage(c.FakeTrouble.Err()); err != nil && rep.Err == nil {
			rep.Err, rep.Findings = err, nil // a check whose fake failed proves nothing (fakeserver.go)
		}
	}()
	c.Parallel, c.Shard = parallel, sh
	c.run(ctx, rep)
	rep.partialOK = cfg.PartialOK
	if words, ok := checkrun.Concurrency(rep.wallNone, rep.concurrencyOff, c.Wall); ok {
		rep.options.Concurrency = words
	}
	if c.LeftOut.Any() {
		rep.leftOut = c.LeftOut.String()
	}
	c.finishQueue(rep)
	afterRunFinding(rep, c.cfg.queue) // after_run.go
	// server_gone.go, closed_pool.go
	checkrun.Settle(ctx, &rep.Err, &rep.Findings, checkrun.Facts{
		Refused:    func() error { return c.refusedConnection(rep) },
		Gone:       func() error { return c.serverWentAway(ctx, rep) },
		ClosedPool: func() error { return poolClosedByJob(rep) },
	})
	return rep
}

// newChecker sets up what a check reuses across its scenarios: a database
// cloned from the schema's template, a worker, the effect fakes. Before it
// makes anything it reserves, with the database, every connection its
// workers may open (waiting while other checks hold them); the reservation
// is given back when the check closes.
func newChecker(ctx context.Context, job Job, cfg *config) (*checker, error) {
	workers, label := cfg.WorkersNeeded(), ""
	if cfg.TestName != "" {
		label = cfg.TestName + " · " + job.Name // a kept database replaces the one this test kept before
	}
	srv, db, worker, release, err := checkrun.Open(ctx, cfg.Server, job.Schema, workers, connectionsOwner(job.Name, workers), label, cfg.ConfigurePool)
	if err != nil {
		return nil, err
	}
	c := &checker{cfg: cfg, job: job}
	if err := c.Start(&cfg.Config, job.Seed, c.gate, srv, db, worker, release, checkstate.NewShared()); err != nil { // effects_gate.go
		_ = c.Close(ctx, false)
		return nil, err
	}
	return c, nil
}

// run plays the check's scenarios and records them in rep: the order is
// internal/checkrun's, what each step does is c's.
func (c *checker) run(ctx context.Context, rep *Report) {
	var ref *ScenarioRun
	var wide *pgfixture.Snapshot
	out := checkrun.Check[*checker, ScenarioRun, Finding]{
		Job:              c.job.Name,
		Only:             c.cfg.Only,
		Picked:           c.cfg.pick != nil,
		CrashCache:       !c.cfg.EveryCrashPoint && c.cfg.Only == "" && c.cfg.pick == nil,
		Parallel:         c.Parallel,
		Shard:            c.Shard,
		Sharded:          rep.shard != nil, // shard.go
		Started:          c.Started,
		OneReference:     c.cfg.OneReference,
		ConcurrencyOff:   rep.concurrencyOff,
		ConcurrentMayRun: c.cfg.ConcurrentMayRun(),

		WorldPrints: func() *crashstates.Prints {
			prints, _ := c.NewWorldPrints(ctx) // internal/crashstates
			return prints
		},
		ClearSessions: func() { c.ClearSessions(ctx) },                                                // internal/sessions
		StartLanes:    func(n int) func() ([]*checker, string, error) { return c.startLanes(ctx, n) }, // parallel.go
		Reference: func(wait func(context.Context, faults.Step) error) error {
			var err error
			if ref, err = c.scenario(ctx, Scenario{Kind: Once}, playArgs{wait: wait}); err != nil {
				return err
			}
			wide, err = c.Seeded.UncomparedRead(ctx, c.SeedDB(), ref.Snapshot) // internal/seed
			return err
		},
		Judge: func() (bool, error) { return c.judgeReference(ctx, rep, ref, wide) },
		Plan: func() ([]scenarios.Scenario, error) {
			points := referencePoints(ref)
			planned, err := plan(points, c.cfg, &c.LeftOut)
			if err != nil {
				return nil, err
			}
			if c.cfg.pick != nil && c.cfg.Only == "" {
				b, _ := c.cfg.resolveBudget() // plan has reported its error
				planned = c.cfg.pick(planned, b)
				for _, sc := range planned {
					rep.drawn = append(rep.drawn, sc.Token())
				}
			}
			out := make([]scenarios.Scenario, len(planned))
			for i, s := range planned {
				s.Of = len(points)
				out[i] = s.internal()
			}
			return out, nil
		},
		WallBudget: func() (time.Duration, error) {
			b, err := c.cfg.WallBudget(DefaultWallBudget) // internal/options
			return b, usage(err)
		},
		OnPlan:  c.cfg.OnPlan,
		SetWall: func(w *wall.Clock) { c.Wall = w },

		Play: func(l *checker, s scenarios.Scenario) (*ScenarioRun, error) {
			return l.scenario(ctx, scenarioOf(s), playArgs{})
		},
		Compare:        func(sr *ScenarioRun) *Finding { return compareRun(ref, sr, c.cfg) },
		Hung:           (*ScenarioRun).hung, // hang.go
		PlayConcurrent: func(lanes []*checker) ([]*ScenarioRun, error) { return c.runConcurrent(ctx, ref, lanes) },
		Sequential: func(lanes []*checker) {
			for _, l := range lanes[1:] {
				if c.QueueErr == nil {
					c.QueueErr = l.QueueErr
				}
			}
		},
		Add: func(sr *ScenarioRun, f *Finding) { rep.add(sr, f) },
	}.Run()
	rep.Err = out.Err
	rep.covered = out.Covered
	rep.coveredN += out.CoveredN
	if rep.shard != nil {
		rep.shard.Planned = append(rep.shard.Planned, out.ShardPlanned...)
	}
	rep.parallelNote, rep.lanes = out.ParallelNote, out.Lanes
	rep.stoppedEarly, rep.wallLeft = out.StoppedEarly, out.WallLeft
	if out.WallNone {
		rep.concurrencyOff, rep.wallNone = out.ConcurrencyOff, true
	}
}

// judgeReference judges the reference run, plays the second and judges
// it, and records them in rep: false when they broke a promise.
func (c *checker) judgeReference(ctx context.Context, rep *Report, ref *ScenarioRun, wide *pgfixture.Snapshot) (bool, error) {
	rep.Reference = ref
	last := lastDelivery(ref) // the delivery that ended the job (earlier ones snoozed)
	ref.Verdict = Kept
	unseen, err := c.unseenWrites(ctx, ref) // sessions.go
	if err != nil {
		return false, err
	}
	if len(unseen) > 0 && len(ref.Sessions) == 0 {
		c.nameUnseenSession(ctx, ref) // sessions.go
	}
	if f := referenceFinding(ref, last, unseen, c.cfg.queue); f != nil {
		ref.Verdict = Broken
		rep.Findings = append(rep.Findings, *f)
		return false, nil
	}
	if err := c.Seeded.UncomparedWrites(ctx, c.SeedDB(), wide, ref.Snapshot); err != nil { // internal/seed
		return false, err
	}
	ref.keyCopies = compare.FindKeyCopies(ref.compared()) // internal/compare/generatedkeys.go
	if err := c.secondReference(ctx, ref, rep); err != nil {
		return false, err
	}
	if len(ref.Sessions) > 0 { // the second clean run saw what the first did not
		ref.Verdict = Broken
		rep.Findings = append(rep.Findings, *referenceFinding(ref, last, nil, c.cfg.queue))
		return false, nil
	}
	return true, nil
}

// add records a scenario that ran and its finding (nil: it kept every
// promise), and returns the finding.
func (r *Report) add(sr *ScenarioRun, f *Finding) *Finding {
	r.Scenarios = append(r.Scenarios, sr)
	sr.Verdict = Kept
	if f != nil {
		sr.Verdict = Broken
		r.Findings = append(r.Findings, *f)
	}
	return f
}

// playArgs is what playing a scenario needs besides the Scenario.
type playArgs struct {
	// wait runs before each point of the reference run: the world's
	// fingerprints (internal/crashstates).
	wait func(context.Context, faults.Step) error
	// chooser is the schedule of a concurrent scenario.
	chooser sched.Chooser
}

// scenario gives the workers fresh sessions, resets the database to the
// seeded state, plays the scenario as its kind says (scenario.go) and
// records the outcome.
func (c *checker) scenario(ctx context.Context, s Scenario, how playArgs) (*ScenarioRun, error) {
	if err := c.Reset(ctx, c.cfg.followUps); err != nil { // internal/checkstate
		return nil, err
	}
	c.cfg.Progress.Start(c.job.Name, s.Token())
	sr := &ScenarioRun{Scenario: s, numbers: map[string]int{}}
	play, ok := s.Kind.play()
	if !ok {
		return nil, fmt.Errorf("twice: internal error: no scenario kind %d", int(s.Kind))
	}
	// Sessions the check did not open (sessions.go, checkrun.Looks).
	looks := checkrun.Looks[Session]{Merge: mergeSessions, Settled: func(ctx context.Context) ([]Session, error) {
		ss, err := sessions.Settled(ctx, c.DB.Pool(), c.DB.Name())
		return sessions.As[Session](ss), err
	}}
	if s.Kind == Once {
		how.wait = looks.Watch(how.wait, func() func() []Session {
			w := sessions.StartWatch(ctx, c.DB.Pool(), c.DB.Name()) // while the reference run's attempt runs
			return func() []Session { return sessions.As[Session](w.End()) }
		})
	}
	err := play(c, ctx, sr, how)
	if err == nil {
		c.playNextRun(ctx, sr)
		c.workFollowUps(ctx, sr) // followups.go
	}
	if sr.Sessions, err = looks.End(ctx, sr.Sessions, err); err != nil {
		return nil, err
	}
	if len(sr.Sessions) > 0 {
		c.ClearSessions(ctx) // what the job left open is not the next scenario's
	}

	w, err := c.World(ctx)
	if err != nil {
		return nil, err
	}
	sr.Snapshot, sr.Effects, sr.Rejected, sr.Foreign = w.Snapshot, w.Effects, w.Rejected, w.Foreign
	return sr, nil
}

func (c *checker) next(sr *ScenarioRun, jobID string) int {
	sr.numbers[jobID]++
	return sr.numbers[jobID]
}

// delivery says how the queue treats a job: the fault of the scenario,
// which strikes once, in the delivery that reaches its point; every other
// delivery runs clean.
type delivery struct {
	fault            inject.Plan   // the scenario's fault (its points numbered across the job's snoozed deliveries)
	crashAfterReturn bool          // crash the delivery that does not snooze after it returns, before the ack
	loseAck          bool          // the ack of the delivery that does not snooze is lost: delivered again unless the ack committed with the job (internal/queue)
	redriveAfter     time.Duration // the delivery after the fault comes this much later on the check's clock
	wait             func(context.Context, faults.Step) error
}

// deliver plays the queue for one job ID on the check's worker: it delivers
// the job until an attempt succeeds, as an at-least-once queue does, with
// the fault d names. It reports whether the job ended acknowledged.
func (c *checker) deliver(ctx context.Context, sr *ScenarioRun, jobID string, d delivery) bool {
	return c.deliverOn(ctx, sr, c.Worker, jobID, d)
}

// deliverOn is deliver on worker w: the queue's loop is internal/queue's
// (Config.Deliver).
func (c *checker) deliverOn(ctx context.Context, sr *ScenarioRun, w *inject.Worker, jobID string, d delivery) bool {
	plan := queue.Plan{Fault: d.fault, CrashAfterReturn: d.crashAfterReturn, LoseAck: d.loseAck, RedriveAfter: d.redriveAfter, Wait: d.wait}
	ok, gaveUp := c.cfg.queue.Deliver(jobID, plan, c.MaxDeliveries(jobID), queue.Deliveries{ // a follow-up's own (internal/checkstate)
		Run: func(p inject.Plan, crash, lost bool) (queue.Attempt, bool) {
			rec := c.startAttempt(ctx, w, jobID, c.next(sr, jobID), p).wait(c.cfg.AttemptTimeout, crash)
			if c.cfg.queue.Snoozed(rec.queued()) {
				lost = false
			}
			c.afterAttempt(ctx, &rec, lost)
			sr.Attempts = append(sr.Attempts, rec)
			switch {
			case rec.Panic != "" || rec.Goexit != "":
				sr.Problems = append(sr.Problems, abortProblem(rec, true))
			case rec.Hung:
				sr.Problems = append(sr.Problems, hungProblem(rec, c.cfg.AttemptTimeout))
			case len(rec.AfterRun) > 0:
				sr.Problems = append(sr.Problems, afterRunProblem(rec))
			default:
				return rec.queued(), false
			}
			return rec.queued(), true
		},
		Later: c.Later,
	})
	if gaveUp != "" {
		sr.Problems = append(sr.Problems, Problem{Kind: ProblemGaveUp, Attempt: jobID, Text: gaveUp})
	}
	return ok
}
