package concurrent

import "github.com/twicekit/twicekit/internal/sched"

// Budget bounds how many schedules a check explores per job: Name (as
// -twice.budget and TWICE_BUDGET spell it), Runs (the most schedules run) and
// Depth (the PCT depth used when sampling).
//
// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
type Budget = sched.Budget

// The budgets: Quick suits -short runs, Default the usual test run, Thorough
// CI jobs that can afford more.
var (
	// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
	Quick = sched.Quick
	// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
	Default = sched.Default
	// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
	Thorough = sched.Thorough
)

// ParseBudget returns the budget with this name (quick, default, thorough).
//
// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
func ParseBudget(name string) (Budget, error) { return sched.ParseBudget(name) }
