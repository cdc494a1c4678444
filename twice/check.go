package twice

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/checkrun"
	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/crashstates"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/internal/scenarios"
	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/sessions"
	"github.com/twicekit/twicekit/internal/sessionstate"
	"github.com/twicekit/twicekit/internal/shard"
	"github.com/twicekit/twicekit/internal/thin"
	"github.com/twicekit/twicekit/internal/wall"
	"github.com/twicekit/twicekit/pgfixture"
)

// checker holds what one check reuses across its scenarios: one database,
// one worker with warm connections, one effect log.
type checker struct {
	cfg    *config
	job    Job
	srv    *pgfixture.Server
	db     *pgfixture.DB
	worker *inject.Worker
	log    *effects.Log
	router *effects.Router // behind http.DefaultTransport; the handles' own are per worker (handles)
	// started is when the check began; wall, when set, is its wall budget
	// (internal/wall).
	started time.Time
	wall    *wall.Clock
	// throughDefault is the router for requests through http.DefaultTransport
	// (default_transport.go).
	throughDefault http.RoundTripper

	provider *effects.Provider

	leftOut thin.LeftOut // what the budget left out of a long job
	conc    *concurrency // the concurrent scenarios' workers
	closers []func()
	// fakeTrouble is what went wrong with the fakes of the check and its
	// lanes (fakeserver.go), shared with the lanes.
	fakeTrouble *fakeTrouble

	mu      sync.Mutex
	clock   time.Time
	foreign []string // effect calls made with a context that is not the attempt's
	// handles are each worker's effect handles (effects_gate.go), and
	// attempts the attempt each running run was started for.
	handles  map[*inject.Worker]*effectHandles
	attempts map[*inject.Run]*Attempt
	ran      []ranAttempt         // the attempts started in the current scenario (lockholder.go)
	queueErr error                // the first error of a queue hook (queue.go)
	follow   queue.State[Attempt] // the scenario's follow-ups (internal/queue)
	// setUp is how each worker session started, and left what each was
	// seen with in the current scenario (sessionstate.go).
	setUp sessionstate.SetUp
	left  sessionstate.Left

	// seeded is the state every scenario starts from, shared with the
	// lanes; seedOn says that c's database restores it on Reset (seeded.go).
	seeded *seedState
	seedOn bool

	parallel int         // how many scenarios may play at once (parallel.go)
	shard    shard.Shard // the share of the scenarios this check plays (shard.go)
}

func (c *checker) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.clock
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
	rep := &Report{Job: job.Name, testName: cfg.testName, dupEnqueueOff: cfg.dupEnqueueOff, concurrencyOff: cfg.conc.off, overlapsOff: cfg.conc.overlapsOff, options: optionsOf(cfg)}
	if rep.Err = checkrun.Validate(job.Run != nil, cfg.maxDeliveries, cfg.attemptTimeout); rep.Err != nil {
		return rep
	}
	parallel, err := cfg.resolveParallel()
	if err != nil {
		rep.Err = usage(err)
		return rep
	}
	sh, err := cfg.resolveShard()
	if err != nil {
		rep.Err = usage(err)
		return rep
	}
	if sh.N > 1 && cfg.only == "" {
		rep.shard = &shard.Run{Shard: sh, Concurrent: sh.Owns(shard.ConcurrentToken)}
	}
	started := time.Now()
	c, err := newChecker(ctx, job, cfg)
	if err != nil {
		rep.Err = checkrun.SetUpErr(ctx, err)
		return rep
	}
	c.started = started
	defer func() {
		keep := checkrun.Keep(!rep.OK(), cfg.keepFailed, cfg.pick != nil, rep.Err)
		if keep {
			rep.KeptDatabase = c.db.URL()
			rep.keptNote = checkrun.KeptNote(c.srv.Mode())
		}
		if err := c.close(context.WithoutCancel(ctx), keep); err != nil && rep.Err == nil {
			rep.Err = checkrun.CloseErr(err)
		}
		if err := usage(c.fakeTrouble.Err()); err != nil && rep.Err == nil {
			rep.Err, rep.Findings = err, nil // a check whose fake failed proves nothing (fakeserver.go)
		}
	}()
	c.parallel, c.shard = parallel, sh
	c.run(ctx, rep)
	rep.partialOK = cfg.partialOK
	if words, ok := checkrun.Concurrency(rep.wallNone, rep.concurrencyOff, c.wall); ok {
		rep.options.Concurrency = words
	}
	if c.leftOut.Any() {
		rep.leftOut = c.leftOut.String()
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
	workers, label := cfg.workersNeeded(), ""
	if cfg.testName != "" {
		label = cfg.testName + " · " + job.Name // a kept database replaces the one this test kept before
	}
	srv, db, worker, release, err := checkrun.Open(ctx, cfg.server, job.Schema, workers, connectionsOwner(job.Name, workers), label, cfg.configurePool)
	if err != nil {
		return nil, err
	}
	c := &checker{cfg: cfg, job: job, srv: srv, db: db, worker: worker, log: effects.NewLog(), seeded: &seedState{}, fakeTrouble: &fakeTrouble{}}
	c.setUp.Watch(worker)
	c.onClose(release) // last, once every worker is closed
	c.onClose(worker.Close)
	if cfg.sqlOpen != nil {
		if err := c.useSQLDriver(); err != nil {
			_ = c.close(ctx, false)
			return nil, err
		}
	}
	if err := c.wireEffects(); err != nil { // effects_wiring.go
		_ = c.close(ctx, false)
		return nil, err
	}
	return c, nil
}

// onClose adds f to what close does first (last added, first run).
func (c *checker) onClose(f func()) { c.closers = append(c.closers, f) }

// close releases what the check holds and drops its database unless keep.
func (c *checker) close(ctx context.Context, keep bool) error {
	for i := len(c.closers) - 1; i >= 0; i-- {
		c.closers[i]()
	}
	c.closers = nil
	sessions.EndLeftovers(ctx, c.db.Pool(), c.db.Name()) // a pool the job never closed, not the next check's
	return c.db.Close(ctx, keep)
}

// run plays the check's scenarios and records them in rep: the order is
// internal/checkrun's, what each step does is c's.
func (c *checker) run(ctx context.Context, rep *Report) {
	var ref *ScenarioRun
	var wide *pgfixture.Snapshot
	out := checkrun.Check[*checker, ScenarioRun, Finding]{
		Job:              c.job.Name,
		Only:             c.cfg.only,
		Picked:           c.cfg.pick != nil,
		CrashCache:       !c.cfg.everyCrashPoint && c.cfg.only == "" && c.cfg.pick == nil,
		Parallel:         c.parallel,
		Shard:            c.shard,
		Sharded:          rep.shard != nil, // shard.go
		Started:          c.started,
		OneReference:     c.cfg.oneReference,
		ConcurrencyOff:   rep.concurrencyOff,
		ConcurrentMayRun: c.cfg.concurrentMayRun(),

		WorldPrints: func() *crashstates.Prints {
			prints, _ := c.newWorldPrints(ctx) // crashstates.go
			return prints
		},
		ClearSessions: func() { c.clearSessions(ctx) },                                                // sessions.go
		StartLanes:    func(n int) func() ([]*checker, string, error) { return c.startLanes(ctx, n) }, // parallel.go
		Reference: func(wait func(context.Context, faults.Step) error) error {
			var err error
			if ref, err = c.scenario(ctx, Scenario{Kind: Once}, playArgs{wait: wait}); err != nil {
				return err
			}
			wide, err = c.seeded.UncomparedRead(ctx, c.seedDB(), ref.Snapshot) // seeded.go
			return err
		},
		Judge: func() (bool, error) { return c.judgeReference(ctx, rep, ref, wide) },
		Plan: func() ([]scenarios.Scenario, error) {
			points := referencePoints(ref)
			planned, err := plan(points, c.cfg, &c.leftOut)
			if err != nil {
				return nil, err
			}
			if c.cfg.pick != nil && c.cfg.only == "" {
				b, _ := c.cfg.conc.resolveBudget() // plan has reported its error
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
			b, err := c.cfg.wallBudget() // wall.go
			return b, usage(err)
		},
		OnPlan:  c.cfg.onPlan,
		SetWall: func(w *wall.Clock) { c.wall = w },

		Play: func(l *checker, s scenarios.Scenario) (*ScenarioRun, error) {
			return l.scenario(ctx, scenarioOf(s), playArgs{})
		},
		Compare:        func(sr *ScenarioRun) *Finding { return compareRun(ref, sr, c.cfg) },
		Hung:           (*ScenarioRun).hung, // hang.go
		PlayConcurrent: func(lanes []*checker) ([]*ScenarioRun, error) { return c.runConcurrent(ctx, ref, lanes) },
		Sequential: func(lanes []*checker) {
			for _, l := range lanes[1:] {
				if c.queueErr == nil {
					c.queueErr = l.queueErr
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
	if err := c.seeded.UncomparedWrites(ctx, c.seedDB(), wide, ref.Snapshot); err != nil { // seeded.go
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
	pool := c.db.Pool()                          // a reset that clones the database again gives it a new pool
	if err := c.freshSessions(ctx); err != nil { // freshsessions.go
		return nil, err
	}
	if err := c.resetSeeded(ctx); err != nil { // seeded.go
		return nil, err
	}
	if c.db.Pool() != pool { // the sessions fresh kept were ended with the database
		if err := c.endSessions(ctx); err != nil {
			return nil, err
		}
	}
	c.log.Reset()
	c.resetEffects()
	c.mu.Lock()
	c.clock = c.cfg.start
	c.foreign = nil
	c.ran = nil
	c.left = sessionstate.Left{}
	c.mu.Unlock()
	if err := c.resetFollowUps(ctx); err != nil { // followups.go
		return nil, err
	}
	c.worker.TakeForeign()

	c.cfg.progress.Start(c.job.Name, s.Token())
	sr := &ScenarioRun{Scenario: s, numbers: map[string]int{}}
	play, ok := s.Kind.play()
	if !ok {
		return nil, fmt.Errorf("twice: internal error: no scenario kind %d", int(s.Kind))
	}
	// Sessions the check did not open (sessions.go, checkrun.Looks).
	looks := checkrun.Looks[Session]{Merge: mergeSessions, Settled: func(ctx context.Context) ([]Session, error) {
		ss, err := sessions.Settled(ctx, c.db.Pool(), c.db.Name())
		return sessions.As[Session](ss), err
	}}
	if s.Kind == Once {
		how.wait = looks.Watch(how.wait, func() func() []Session {
			w := sessions.StartWatch(ctx, c.db.Pool(), c.db.Name()) // while the reference run's attempt runs
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
		c.clearSessions(ctx) // what the job left open is not the next scenario's
	}

	snap, err := c.db.Snapshot(ctx, c.cfg.snapshot...)
	if err != nil {
		return nil, fmt.Errorf("twice: internal error: reading the database: %w", err)
	}
	sr.Snapshot = snap
	sr.Effects = c.log.Effects()
	sr.Rejected = c.provider.Rejected()
	sr.Foreign = append(c.worker.TakeForeign(), c.takeForeign()...)
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
	return c.deliverOn(ctx, sr, c.worker, jobID, d)
}

// deliverOn is deliver on worker w: the queue's loop is internal/queue's
// (Config.Deliver).
func (c *checker) deliverOn(ctx context.Context, sr *ScenarioRun, w *inject.Worker, jobID string, d delivery) bool {
	plan := queue.Plan{Fault: d.fault, CrashAfterReturn: d.crashAfterReturn, LoseAck: d.loseAck, RedriveAfter: d.redriveAfter, Wait: d.wait}
	ok, gaveUp := c.cfg.queue.Deliver(jobID, plan, c.maxDeliveries(jobID), queue.Deliveries{ // followups.go
		Run: func(p inject.Plan, crash, lost bool) (queue.Attempt, bool) {
			rec := c.startAttempt(ctx, w, jobID, c.next(sr, jobID), p).wait(c.cfg.attemptTimeout, crash)
			if c.cfg.queue.Snoozed(rec.queued()) {
				lost = false
			}
			c.afterAttempt(ctx, &rec, lost)
			sr.Attempts = append(sr.Attempts, rec)
			switch {
			case rec.Panic != "" || rec.Goexit != "":
				sr.Problems = append(sr.Problems, abortProblem(rec, true))
			case rec.Hung:
				sr.Problems = append(sr.Problems, hungProblem(rec, c.cfg.attemptTimeout))
			case len(rec.AfterRun) > 0:
				sr.Problems = append(sr.Problems, afterRunProblem(rec))
			default:
				return rec.queued(), false
			}
			return rec.queued(), true
		},
		Later: func(by time.Duration) {
			c.mu.Lock()
			c.clock = c.clock.Add(by)
			c.mu.Unlock()
		},
	})
	if gaveUp != "" {
		sr.Problems = append(sr.Problems, Problem{Kind: ProblemGaveUp, Attempt: jobID, Text: gaveUp})
	}
	return ok
}

func (c *checker) takeForeign() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := c.foreign
	c.foreign = nil
	return f
}
