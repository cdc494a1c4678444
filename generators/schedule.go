package generators

import (
	"fmt"
	"slices"

	"pgregory.net/rapid"

	"github.com/twicekit/twicekit/concurrent"
)

// Index draws a position in a list of n things, 0..n-1, shrinking toward 0.
// It panics unless n >= 1.
func Index(n int) *rapid.Generator[int] {
	if n < 1 {
		panic(fmt.Sprintf("generators: Index(%d): nothing to choose from", n))
	}
	return rapid.IntRange(0, n-1)
}

// CrashPoint draws a point of a reference run of points points, 1..points,
// shrinking toward 1: a failing crash shrinks to the earliest point where a
// crash still breaks the job. Draw it after the reference run, once the
// number of points is known. It panics unless points >= 1.
func CrashPoint(points int) *rapid.Generator[int] {
	if points < 1 {
		panic(fmt.Sprintf("generators: CrashPoint(%d): the reference run has no points", points))
	}
	return rapid.IntRange(1, points)
}

// Subset draws 1..max distinct positions out of n, in ascending order. It
// shrinks toward fewer positions and earlier ones, down to [0]: the scenarios
// a check runs, say, shrinking toward the single earliest one that fails.
func Subset(n, max int) *rapid.Generator[[]int] {
	if n < 1 || max < 1 {
		panic(fmt.Sprintf("generators: Subset(%d, %d): want n >= 1 and max >= 1", n, max))
	}
	max = min(max, n)
	return rapid.Map(rapid.SliceOfNDistinct(Index(n), 1, max, rapid.ID[int]), func(s []int) []int {
		slices.Sort(s)
		return s
	})
}

// Chooser makes the choices of a scheduler from a rapid.T, one labelled draw
// per choice, so rapid shrinks an interleaving toward fewer context switches:
// at every step it first draws whether to preempt the running worker (a
// boolean, shrinking toward "no"), and only then which other worker runs
// (shrinking toward the lowest index). A worker that finished or blocked is
// left without a preemption being counted. At most max preemptions are
// drawn; past that the running worker keeps running.
//
// A scheduler that knows the steps up front can use [Interleaving] instead;
// one that learns at every point which workers can run asks [Chooser.Next].
type Chooser struct {
	t       *rapid.T
	label   string
	max     int
	used    int
	current int
	started bool
	steps   concurrent.Schedule
}

// NewChooser returns a Chooser drawing from t, labelling its draws with label
// ("schedule switch", "schedule worker"), allowing at most maxPreemptions.
func NewChooser(t *rapid.T, label string, maxPreemptions int) *Chooser {
	return &Chooser{t: t, label: label, max: maxPreemptions}
}

// Next returns the worker that takes the next step, out of runnable (the
// workers that can take one now, in any order; not empty).
func (c *Chooser) Next(runnable []int) int {
	if len(runnable) == 0 {
		panic("generators: Chooser.Next with no runnable worker")
	}
	r := slices.Sorted(slices.Values(runnable))
	w := c.choose(r)
	c.current, c.started = w, true
	c.steps = append(c.steps, w)
	return w
}

func (c *Chooser) choose(runnable []int) int {
	if !c.started {
		return runnable[0]
	}
	if slices.Contains(runnable, c.current) {
		if len(runnable) == 1 || c.used >= c.max || !rapid.Bool().Draw(c.t, c.label+" switch") {
			return c.current
		}
		c.used++
		others := slices.DeleteFunc(slices.Clone(runnable), func(w int) bool { return w == c.current })
		return others[pick(c.t, c.label, len(others))]
	}
	return runnable[pick(c.t, c.label, len(runnable))]
}

func pick(t *rapid.T, label string, n int) int {
	if n == 1 {
		return 0
	}
	return Index(n).Draw(t, label+" worker")
}

// Preemptions is how many preemptions the chooser has drawn so far.
func (c *Chooser) Preemptions() int { return c.used }

// Schedule is the interleaving chosen so far.
func (c *Chooser) Schedule() concurrent.Schedule { return slices.Clone(c.steps) }

// Interleaving draws an interleaving of workers that take steps[i] steps each,
// with at most maxPreemptions preemptions: first how many it allows
// (0..maxPreemptions, shrinking toward 0), then the choices of a [Chooser].
// It shrinks toward 0 preemptions: worker 0 to its end, then worker 1, and so
// on ("A3B2" for steps 3 and 2).
func Interleaving(steps []int, maxPreemptions int) *rapid.Generator[concurrent.Schedule] {
	steps = slices.Clone(steps)
	return rapid.Custom(func(t *rapid.T) concurrent.Schedule {
		left := slices.Clone(steps)
		allowed := rapid.IntRange(0, max(maxPreemptions, 0)).Draw(t, "preemptions allowed")
		c := NewChooser(t, "step", allowed)
		for {
			var runnable []int
			for w, n := range left {
				if n > 0 {
					runnable = append(runnable, w)
				}
			}
			if len(runnable) == 0 {
				return c.Schedule()
			}
			left[c.Next(runnable)]--
		}
	})
}
