package checkrun

import (
	"context"
	"fmt"
	"time"

	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/crashstates"
	"github.com/twicekit/twicekit/internal/inorder"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/scenarios"
	"github.com/twicekit/twicekit/internal/shard"
	"github.com/twicekit/twicekit/internal/wall"
)

// Check is one check's run: on lanes of type L, each scenario played
// making a run of type R, each compared into a finding of type F (nil:
// none).
type Check[L, R, F any] struct {
	Job string // the job's name
	// Only is the token of the one scenario to replay ("": every one);
	// Picked, that rapid drew the scenarios (Plan does): no wall budget
	// bounds either.
	Only   string
	Picked bool
	// CrashCache: the world's fingerprints may cover a crash point by an
	// earlier one (not every crash point, no Only, no draw).
	CrashCache bool
	Parallel   int         // how many lanes the check may play on
	Shard      shard.Shard // the share of the scenarios this check plays
	Sharded    bool        // the report names the shard: Out.ShardPlanned
	// Started is when the check began; OneReference, that it plays one
	// clean run, not two (a clean run's cost, for the wall budget).
	Started      time.Time
	OneReference bool
	// ConcurrencyOff is why the options switched the concurrent scenarios
	// off ("": on); ConcurrentMayRun, whether the check may play them.
	ConcurrencyOff   string
	ConcurrentMayRun bool

	WorldPrints   func() *crashstates.Prints // the world's fingerprints (nil: none)
	ClearSessions func()                     // ends what sessions the job left open
	// StartLanes makes the lanes (n wanted) while the reference runs play,
	// and returns the function that waits for them (inorder.Start).
	StartLanes func(n int) (wait func() ([]L, string, error))
	// Reference plays the reference run, wait before each of its points,
	// and reads what the comparison needs of it.
	Reference func(wait func(context.Context, faults.Step) error) error
	// Judge judges the reference runs (the second one too) and records
	// them: false when they broke a promise (its finding recorded).
	Judge func() (bool, error)
	// Plan is the plan of scenarios for the reference run, drawn when
	// Picked, each knowing how many points the reference run has.
	Plan func() ([]scenarios.Scenario, error)
	// WallBudget is the check's wall budget, or the user's mistake in
	// naming it; OnPlan (may be nil) hears the plan's line for -v.
	WallBudget func() (time.Duration, error)
	OnPlan     func(line string)
	SetWall    func(w *wall.Clock) // the check's clock, when bounded

	Play    func(l L, s scenarios.Scenario) (*R, error) // plays s on lane l
	Compare func(r *R) *F                               // what a run found
	Hung    func(r *R) bool                             // whether an attempt of a run hung
	// PlayConcurrent plays the concurrent scenarios on the lanes.
	PlayConcurrent func(lanes []L) ([]*R, error)
	// Sequential runs once the sequential scenarios are played, before
	// their results are folded.
	Sequential func(lanes []L)
	// Add records a scenario that ran and its finding; the concurrent
	// scenarios that ran are recorded so too, each compared (Compare).
	Add func(r *R, f *F)
}

// addConcurrent records the concurrent scenarios that ran, each compared.
func (k Check[L, R, F]) addConcurrent(runs []*R) {
	for _, r := range runs {
		k.Add(r, k.Compare(r))
	}
}

// Out is what a check's run says in its report.
type Out struct {
	Err error
	// Covered and CoveredN are the crash points covered by an earlier one
	// with the same world, in words and how many.
	Covered      string
	CoveredN     int
	ShardPlanned []string // every planned token, when Sharded
	ParallelNote string   // why fewer lanes played than asked
	Lanes        int      // how many lanes played the sequential scenarios
	StoppedEarly string   // the scenarios left out after a hang, and why
	WallLeft     string   // what the wall budget left out
	// ConcurrencyOff, with WallNone, says the wall budget left out every
	// concurrent scenario.
	ConcurrencyOff string
	WallNone       bool
}

// Run plays the check: the reference run (the crash states' fingerprints
// taken at its points) while the lanes are made, then, when the reference
// runs kept every promise, the plan's sequential scenarios on the lanes
// and the concurrent ones. Under a wall budget every sequential kind's
// first scenario plays first, then the concurrent scenarios (each of
// their kinds' first ones, then more while the sequential ones still to
// play keep their share), then the other sequential scenarios while there
// is time. The results fold in plan order: a crash point covered by an
// earlier one is skipped, and the first hung scenario stops the rest.
func (k Check[L, R, F]) Run() (out Out) {
	var prints *crashstates.Prints
	var wait func(context.Context, faults.Step) error
	if k.CrashCache {
		prints = k.WorldPrints() // without it every crash point is played
	}
	if prints != nil {
		wait = prints.Wait
	}
	k.ClearSessions()
	lanesWanted := k.Parallel
	if k.Only != "" {
		lanesWanted = 1 // one scenario to replay
	}
	waitLanes := k.StartLanes(lanesWanted)
	defer waitLanes()
	refStarted := time.Now() // what a clean run costs, for the wall budget (internal/wall)
	if err := k.Reference(wait); err != nil {
		out.Err = err
		return out
	}
	crashes := crashstates.NewCache(prints)
	defer func() {
		out.Covered = crashes.CoveredText()
		out.CoveredN = crashes.Covered()
	}()
	if ok, err := k.Judge(); err != nil || !ok {
		out.Err = err
		return out
	}
	clean := time.Since(refStarted)
	if !k.OneReference {
		clean /= 2
	}
	plan, err := k.Plan()
	if err != nil {
		out.Err = err
		return out
	}
	if k.Sharded {
		for _, s := range plan {
			out.ShardPlanned = append(out.ShardPlanned, s.Token())
		}
		plan = keepShard(k.Shard, plan, coveredBy(plan, prints))
	}
	lanes, note, err := waitLanes()
	if err != nil {
		out.Err = err
		return out
	}
	out.ParallelNote, out.Lanes = note, len(lanes)
	playsConcurrent := k.Only != "" || k.Shard.Owns(shard.ConcurrentToken)
	var clock *wall.Clock
	if k.Only == "" && !k.Picked {
		budget, err := k.WallBudget()
		if err != nil {
			out.Err = err
			return out
		}
		w := wall.New(budget, k.Started, clean, len(lanes))
		if budget > 0 {
			clock = w
			k.SetWall(w)
		}
		if k.OnPlan != nil {
			k.OnPlan(w.PlanLine(k.Job, len(plan)))
		}
	}
	covered := coveredBy(plan, prints)
	results := inorder.NewPlayed[R, F](len(plan))
	playAll := func(order []int) {
		inorder.Lanes[L, R, F]{
			Lanes:     lanes,
			CoveredBy: covered,
			Room:      func() bool { return clock.Room(0, false) },
			Play:      func(l L, i int) (*R, error) { return k.Play(l, plan[i]) },
			Compare:   k.Compare,
			Hung:      k.Hung,
		}.PlayAll(results, order)
	}
	var concurrent []*R
	concurrentPlayed := false
	playConcurrent := func() bool {
		concurrentPlayed = true
		var err error
		if concurrent, err = k.PlayConcurrent(lanes); err != nil {
			out.Err = err
			return false
		}
		return true
	}
	if clock == nil {
		playAll(allOf(plan))
	} else {
		firsts, rest := wallOrder(plan)
		playAll(firsts)
		if !inorder.Stopped(results, firsts, k.Hung) {
			if playsConcurrent {
				clock.ShareWith(len(rest))
				if !playConcurrent() {
					return out
				}
			}
			clock.ShareWith(0)
			playAll(rest)
		} else {
			for _, i := range rest {
				results[i].NotStarted = true
			}
		}
	}
	k.Sequential(lanes)
	var wallLeft []string
	defer func() { out.WallLeft = clock.LeftText(wallLeft) }()
	for i, s := range plan {
		p := results[i]
		if p.OutOfTime {
			wallLeft = append(wallLeft, s.Token())
			continue
		}
		if s.Kind == scenarios.CrashBefore && crashes.Skip(s.Point) {
			continue
		}
		if p.NotStarted {
			continue // an earlier scenario in play order hung: said below
		}
		if p.Err != nil {
			out.Err = p.Err
			return out
		}
		if p.Run == nil {
			out.Err = fmt.Errorf("twice: internal error: scenario %s was not played", s.Token())
			return out
		}
		k.Add(p.Run, p.Finding)
		if s.Kind == scenarios.CrashBefore {
			crashes.Ran(s.Point, p.Finding != nil)
		}
		if k.Hung(p.Run) {
			left := len(plan) - i - 1
			for _, q := range results[:i] {
				if q.NotStarted {
					left++
				}
			}
			concurrentLeft := !concurrentPlayed && k.ConcurrentMayRun && k.Only == "" && k.Shard.Owns(shard.ConcurrentToken)
			if left > 0 || concurrentLeft {
				out.StoppedEarly = report.StoppedAfterHangText(s.Token(), left, concurrentLeft)
			}
			k.addConcurrent(concurrent)
			return out
		}
	}
	if !playsConcurrent {
		return out
	}
	if !concurrentPlayed && !playConcurrent() {
		return out
	}
	if clock != nil && clock.NoneFitted() && k.ConcurrencyOff == "" {
		out.ConcurrencyOff, out.WallNone = clock.ConcText(len(wallLeft) == 0), true
	}
	k.addConcurrent(concurrent)
	return out
}
