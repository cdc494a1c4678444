package twice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/compare"
	"github.com/twicekit/twicekit/internal/crashstates"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/internal/sched"
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
	if job.Run == nil {
		rep.Err = errors.New("twice: the job has no Run function: set Job.Run to the function a worker calls for one delivery")
		return rep
	}
	if cfg.maxDeliveries < 1 || cfg.attemptTimeout <= 0 {
		rep.Err = fmt.Errorf("twice: MaxDeliveries must be at least 1 and AttemptTimeout positive (got %d, %s)", cfg.maxDeliveries, cfg.attemptTimeout)
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
		rep.Err = err
		if ended := callerEnded(ctx); ended != nil {
			rep.Err = ended // caller_context.go
		}
		return rep
	}
	c.started = started
	defer func() {
		// rapid replays many failing cases: keep none; a mistake in the
		// options is not the job's: nothing to inspect.
		// Nor does a server that refused or lost it: the check's database
		// would only fill the server further.
		keep := !rep.OK() && cfg.keepFailed && cfg.pick == nil && !isUsage(rep.Err) && !isInfrastructure(rep.Err) && !isCallerEnded(rep.Err)
		if keep {
			rep.KeptDatabase = c.db.URL()
			rep.keptNote = keptNote(c.srv.Mode())
		}
		if err := c.close(context.WithoutCancel(ctx), keep); err != nil && rep.Err == nil {
			rep.Err = fmt.Errorf("twice: internal error: closing the check's database: %w", err)
			if cause := goneCause(err); cause != "" {
				rep.Err = wentAway(cause, err)
			}
		}
		if err := usage(c.fakeTrouble.Err()); err != nil && rep.Err == nil {
			rep.Err, rep.Findings = err, nil // a check whose fake failed proves nothing (fakeserver.go)
		}
	}()
	c.parallel, c.shard = parallel, sh
	c.run(ctx, rep)
	rep.partialOK = cfg.partialOK
	if rep.wallNone {
		rep.options.Concurrency = "not checked: " + rep.concurrencyOff
	} else if c.wall != nil && c.wall.Shortened() {
		rep.options.Concurrency = "cut by the wall budget (" + c.wall.Budget().String() + ")"
	}
	if c.leftOut.Any() {
		rep.leftOut = c.leftOut.String()
	}
	c.finishQueue(rep)
	afterRunFinding(rep, c.cfg.queue) // after_run.go
	if err := c.refusedConnection(rep); err != nil && rep.Err == nil {
		rep.Err, rep.Findings = infrastructure(err), nil // a check that could not connect proves nothing
	}
	if err := c.serverWentAway(ctx, rep); err != nil {
		rep.Err, rep.Findings = err, nil
	}
	if err := poolClosedByJob(rep); err != nil && !isInfrastructure(rep.Err) {
		rep.Err, rep.Findings = usage(err), nil // the job's database shows nothing of it: keep none
	}
	if err := callerEnded(ctx); err != nil {
		rep.Err, rep.Findings = err, nil // what failed after it failed because of it
	}
	return rep
}

// keptNote is what to know about a kept database's URL on a server of
// mode: in local and container mode the server, and the database, end with
// the test binary.
func keptNote(mode string) string {
	what := map[string]string{
		"local":     "in local mode the cluster is removed when the binary ends",
		"container": "in container mode the container is removed when the binary ends",
	}[mode]
	if what == "" {
		return ""
	}
	return " (this URL dies with the test binary: " + what + "; " +
		"to look at the database afterwards, run the test again with TWICE_DATABASE_URL set to a server of yours)"
}

// newChecker sets up what a check reuses across its scenarios: a database
// cloned from the schema's template, a worker, the effect fakes. Before it
// makes anything it reserves, with the database, every connection its
// workers may open (waiting while other checks hold them); the reservation
// is given back when the check closes.
func newChecker(ctx context.Context, job Job, cfg *config) (*checker, error) {
	srv := cfg.server
	if srv == nil {
		var err error
		if srv, err = pgfixture.Shared(ctx); err != nil {
			return nil, fmt.Errorf("twice: no PostgreSQL to run the check on: %w", err)
		}
	}
	workers := cfg.workersNeeded()
	db, release, err := srv.CreateDBReserving(ctx, job.Schema, workers*inject.MaxConnsPerWorker, connectionsOwner(job.Name, workers))
	switch {
	case errors.Is(err, pgfixture.ErrConnectionLimit):
		hint := ""
		if workers > 1 {
			hint = fmt.Sprintf("; or, where the server cannot change, twice.WithoutConcurrency(reason) makes this check need %d",
				inject.MaxConnsPerWorker+pgfixture.ControlPoolConns)
		}
		return nil, fmt.Errorf("twice: not enough connections on the server for this check: %w%s", err, hint)
	case errors.Is(err, pgfixture.ErrTooManyClients):
		return nil, fmt.Errorf("twice: the server refused the check's connections: %w", err)
	case err != nil && ctx.Err() != nil:
		return nil, callerEnded(ctx)
	case err != nil:
		return nil, fmt.Errorf("twice: the job's schema could not be set up: %w", err)
	}
	if cfg.testName != "" {
		db.Label(cfg.testName + " · " + job.Name) // a kept database replaces the one this test kept before
	}
	worker, err := inject.NewWorkerConfigured(workerConfig(db), cfg.configurePool)
	if err != nil {
		release()
		_ = db.Close(ctx, false)
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
	endLeftoverSessions(ctx, c.db.Pool(), c.db.Name())
	return c.db.Close(ctx, keep)
}

func (c *checker) run(ctx context.Context, rep *Report) {
	var prints *crashstates.Prints
	var how playArgs
	if !c.cfg.everyCrashPoint && c.cfg.only == "" && c.cfg.pick == nil {
		prints, _ = c.newWorldPrints(ctx) // without it every crash point is played
	}
	if prints != nil {
		how.wait = prints.Wait
	}
	c.clearSessions(ctx) // sessions.go
	lanesWanted := c.parallel
	if c.cfg.only != "" {
		lanesWanted = 1 // one scenario to replay
	}
	waitLanes := c.startLanes(ctx, lanesWanted) // parallel.go
	defer waitLanes()
	refStarted := time.Now() // what a clean run costs, for the wall budget: wall.go
	ref, err := c.scenario(ctx, Scenario{Kind: Once}, how)
	if err != nil {
		rep.Err = err
		return
	}
	wide, err := c.uncomparedRead(ctx, ref) // seeded.go
	if err != nil {
		rep.Err = err
		return
	}
	crashes := crashstates.NewCache(prints)
	defer func() {
		rep.covered = crashes.CoveredText()
		rep.coveredN += crashes.Covered()
	}()
	rep.Reference = ref
	last := lastDelivery(ref) // the delivery that ended the job (earlier ones snoozed)
	points := referencePoints(ref)
	ref.Verdict = Kept
	unseen, err := c.unseenWrites(ctx, ref) // sessions.go
	if err != nil {
		rep.Err = err
		return
	}
	if len(unseen) > 0 && len(ref.Sessions) == 0 {
		c.nameUnseenSession(ctx, ref) // sessions.go
	}
	if f := referenceFinding(ref, last, unseen, c.cfg.queue); f != nil {
		ref.Verdict = Broken
		rep.Findings = append(rep.Findings, *f)
		return
	}
	if err := c.uncomparedWrites(ctx, wide, ref); err != nil {
		rep.Err = err
		return
	}
	ref.keyCopies = compare.FindKeyCopies(ref.compared()) // internal/compare/generatedkeys.go
	if err := c.secondReference(ctx, ref, rep); err != nil {
		rep.Err = err
		return
	}
	if len(ref.Sessions) > 0 { // the second clean run saw what the first did not
		ref.Verdict = Broken
		rep.Findings = append(rep.Findings, *referenceFinding(ref, last, nil, c.cfg.queue))
		return
	}
	clean := time.Since(refStarted)
	if !c.cfg.oneReference {
		clean /= 2
	}
	scenarios, err := plan(points, c.cfg, &c.leftOut)
	if err != nil {
		rep.Err = err
		return
	}
	if c.cfg.pick != nil && c.cfg.only == "" {
		b, _ := c.cfg.conc.resolveBudget() // plan has reported its error
		scenarios = c.cfg.pick(scenarios, b)
		for _, sc := range scenarios {
			rep.drawn = append(rep.drawn, sc.Token())
		}
	}
	for i := range scenarios {
		scenarios[i].Of = len(points)
	}
	if rep.shard != nil { // shard.go
		for _, s := range scenarios {
			rep.shard.Planned = append(rep.shard.Planned, s.Token())
		}
		scenarios = keepShard(c.shard, scenarios, coveredBy(scenarios, prints))
	}
	lanes, note, err := waitLanes()
	if err != nil {
		rep.Err = err
		return
	}
	rep.parallelNote, rep.lanes = note, len(lanes)
	playsConcurrent := c.cfg.only != "" || c.shard.Owns(shard.ConcurrentToken)
	if c.cfg.only == "" && c.cfg.pick == nil {
		budget, err := c.cfg.wallBudget()
		if err != nil {
			rep.Err = usage(err)
			return
		}
		w := wall.New(budget, c.started, clean, len(lanes)) // internal/wall
		if budget > 0 {
			c.wall = w
		}
		if c.cfg.onPlan != nil {
			c.cfg.onPlan(w.PlanLine(c.job.Name, len(scenarios)))
		}
	}
	covered := coveredBy(scenarios, prints)
	results := newPlayed(len(scenarios))
	var concurrent []*ScenarioRun
	concurrentPlayed := false
	playConcurrent := func() bool {
		concurrentPlayed = true
		var err error
		if concurrent, err = c.runConcurrent(ctx, ref, lanes); err != nil {
			rep.Err = err
			return false
		}
		return true
	}
	if c.wall == nil {
		c.playAll(ctx, lanes, ref, scenarios, covered, results, allOf(scenarios))
	} else {
		// Under a wall budget: every sequential kind's first scenario, then
		// the concurrent scenarios (each of their kinds' first ones, then
		// more while the sequential ones still to play keep their share),
		// then the other sequential scenarios while there is time.
		firsts, rest := wallOrder(scenarios)
		c.playAll(ctx, lanes, ref, scenarios, covered, results, firsts)
		if !stopped(results, firsts) {
			if playsConcurrent {
				c.wall.ShareWith(len(rest))
				if !playConcurrent() {
					return
				}
			}
			c.wall.ShareWith(0)
			c.playAll(ctx, lanes, ref, scenarios, covered, results, rest)
		} else {
			for _, i := range rest {
				results[i].NotStarted = true
			}
		}
	}
	for _, l := range lanes[1:] {
		if c.queueErr == nil {
			c.queueErr = l.queueErr
		}
	}
	var wallLeft []string
	defer func() { rep.wallLeft = c.wall.LeftText(wallLeft) }()
	for i, s := range scenarios {
		p := results[i]
		if p.OutOfTime {
			wallLeft = append(wallLeft, s.Token())
			continue
		}
		if s.Kind == CrashBefore && crashes.Skip(s.Point) {
			continue
		}
		if p.NotStarted {
			continue // an earlier scenario in play order hung: said below
		}
		if p.Err != nil {
			rep.Err = p.Err
			return
		}
		if p.Run == nil {
			rep.Err = fmt.Errorf("twice: internal error: scenario %s was not played", s.Token())
			return
		}
		sr := p.Run
		f := rep.add(sr, p.Finding)
		if s.Kind == CrashBefore {
			crashes.Ran(s.Point, f != nil)
		}
		if sr.hung() {
			left := len(scenarios) - i - 1
			for _, q := range results[:i] {
				if q.NotStarted {
					left++
				}
			}
			concurrentLeft := !concurrentPlayed && c.cfg.concurrentMayRun() && c.cfg.only == "" && c.shard.Owns(shard.ConcurrentToken)
			if left > 0 || concurrentLeft {
				rep.stoppedEarly = stoppedAfterHang(sr, left, concurrentLeft)
			}
			c.addConcurrent(rep, ref, concurrent)
			return
		}
	}
	if !playsConcurrent {
		return
	}
	if !concurrentPlayed && !playConcurrent() {
		return
	}
	if c.wall != nil && c.wall.NoneFitted() && rep.concurrencyOff == "" {
		rep.concurrencyOff, rep.wallNone = c.wall.ConcText(len(wallLeft) == 0), true
	}
	c.addConcurrent(rep, ref, concurrent)
}

// allOf lists the indexes of scenarios: the plan's order.
func allOf(scenarios []Scenario) []int {
	order := make([]int, len(scenarios))
	for i := range order {
		order[i] = i
	}
	return order
}

// addConcurrent records the concurrent scenarios that ran.
func (c *checker) addConcurrent(rep *Report, ref *ScenarioRun, runs []*ScenarioRun) {
	for _, sr := range runs {
		rep.add(sr, compareRun(ref, sr, c.cfg))
	}
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
	if err := c.freshSessions(ctx); err != nil { // freshsessions.go
		return nil, err
	}
	if err := c.resetSeeded(ctx); err != nil { // seeded.go
		return nil, err
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
	// Sessions the check did not open (sessions.go): watched while the
	// reference run's attempt runs and looked at, settled, at each of its
	// points; looked at, settled, when any scenario's attempts are over.
	var watch *sessionWatch
	var atPoints []Session
	var lookErr error // a look that failed: never taken for "no session"
	if s.Kind == Once {
		inner := how.wait
		how.wait = func(ctx context.Context, st faults.Step) error {
			ss, err := c.settledSessions(ctx)
			atPoints = mergeSessions(atPoints, ss)
			if err != nil && lookErr == nil {
				lookErr = err
			}
			if inner != nil {
				return inner(ctx, st)
			}
			return nil
		}
		watch = c.watchSessions(ctx)
	}
	err := play(c, ctx, sr, how)
	if err == nil {
		c.playNextRun(ctx, sr)
		c.workFollowUps(ctx, sr) // followups.go
	}
	if watch != nil {
		sr.Sessions = mergeSessions(atPoints, watch.end())
	}
	if err != nil {
		return nil, err
	}
	if lookErr != nil {
		return nil, lookErr
	}
	settled, err := c.settledSessions(ctx)
	if err != nil {
		return nil, err
	}
	sr.Sessions = mergeSessions(sr.Sessions, settled)
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
