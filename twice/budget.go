package twice

import (
	"cmp"
	"errors"
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/internal/sched"
	"github.com/twicekit/twicekit/internal/settings"
)

// Budget bounds how much of a job a check plays. The named budgets are
// [QuickBudget], [DefaultBudget] and [ThoroughBudget]; a test picks one
// with -twice.budget=NAME or TWICE_BUDGET=NAME (-short means quick, nothing
// means default), and [WithBudget] wins over all of them. A Budget of your
// own works too: a zero cap means "no cap", except as the doc of
// Interleavings and Depth say.
type Budget struct {
	// Name is how -twice.budget and TWICE_BUDGET spell it, and how reports
	// name it.
	Name string
	// CrashPoints is how many crash points a long job plays at most (0:
	// all). Transaction boundaries, effects, explicit points and the first
	// and last points are always kept; the others are spread evenly.
	CrashPoints int
	// OverlapPoints is how many overlap scenarios a long job plays at most
	// (0: all), chosen the same way.
	OverlapPoints int
	// Interleavings is how many interleavings of two attempts a check
	// explores: every one when they are that few, else seeded PCT samples
	// (0 means 100, the default budget's).
	Interleavings int
	// InterleavedPoints bounds the points the sampled interleavings replay
	// in all, so long jobs get fewer samples (0: no bound).
	InterleavedPoints int
	// Depth is the PCT depth d of the samples (d−1 priority change points;
	// 0 means 3).
	Depth int
	// RapidScenarios is how many of a check's planned scenarios one rapid
	// check draws (0: every one).
	RapidScenarios int
	// StatementRepliesLost plays, at every statement that commits (an
	// autocommit statement, a COMMIT) among the crash points kept, the
	// statement reply-lost scenario: PostgreSQL applied it, the job saw a
	// connection error. [LoseStatementReplies] asks for them under any
	// budget.
	StatementRepliesLost bool
}

// The named budgets: Quick suits -short runs, Default the usual test run,
// Thorough CI jobs that can afford more.
var (
	QuickBudget    = Budget{Name: "quick", CrashPoints: 12, OverlapPoints: 6, Interleavings: 20, InterleavedPoints: 1200, Depth: 2, RapidScenarios: 1}
	DefaultBudget  = Budget{Name: "default", CrashPoints: 24, OverlapPoints: 12, Interleavings: 100, InterleavedPoints: 4000, Depth: 3, RapidScenarios: 3}
	ThoroughBudget = Budget{Name: "thorough", Interleavings: 1000, Depth: 3, StatementRepliesLost: true}
)

// Budgets lists the named budgets from the smallest.
func Budgets() []Budget { return []Budget{QuickBudget, DefaultBudget, ThoroughBudget} }

// ParseBudget returns the named budget ("quick", "default", "thorough").
func ParseBudget(name string) (Budget, error) {
	var names []string
	for _, b := range Budgets() {
		if b.Name == name {
			return b, nil
		}
		names = append(names, b.Name)
	}
	return Budget{}, fmt.Errorf("twice: %w", fmt.Errorf("unknown budget %q: use one of %s", name, strings.Join(names, ", ")))
}

// WithBudget makes the check play within b; it wins over -twice.budget,
// TWICE_BUDGET and -short. Inside rapid.Check only the overlap scenarios
// run unless this option is given.
func WithBudget(b Budget) Option {
	return optionFunc(func(c *config) { c.budget = &b })
}

// validate says what is wrong with a budget of one's own.
func (b Budget) validate() error {
	if b.CrashPoints < 0 || b.OverlapPoints < 0 || b.Interleavings < 0 || b.InterleavedPoints < 0 || b.Depth < 0 || b.RapidScenarios < 0 {
		return fmt.Errorf("twice: budget %q has a negative cap (%+v): a cap is a count, and 0 means no cap", b.Name, b)
	}
	return nil
}

// explore is the budget as the scheduler's exploration takes it, for two
// attempts of n points each: the sampled interleavings are bounded so that
// they replay about InterleavedPoints points in all (at least 2 runs, at
// most Interleavings).
func (b Budget) explore(n int) sched.Budget {
	runs := cmp.Or(b.Interleavings, DefaultBudget.Interleavings)
	if b.InterleavedPoints > 0 && n > 0 {
		runs = min(runs, max(2, b.InterleavedPoints/(2*n)))
	}
	return sched.Budget{Name: b.Name, Runs: runs, Depth: cmp.Or(b.Depth, 3)}
}

// resolveBudget: the option, else -twice.budget, else TWICE_BUDGET, else
// quick under -short, else default.
func (c *config) resolveBudget() (Budget, error) {
	if c.budget != nil {
		return *c.budget, c.budget.validate()
	}
	return flagBudget()
}

// flagBudget is the budget -twice.budget, TWICE_BUDGET or -short name.
func flagBudget() (Budget, error) {
	name, from := settings.Budget()
	if name != "" {
		b, err := ParseBudget(name)
		if err != nil {
			return b, fmt.Errorf("twice: %s: %w", from, errors.Unwrap(err))
		}
		return b, nil
	}
	if settings.Short() {
		return QuickBudget, nil
	}
	return DefaultBudget, nil
}
