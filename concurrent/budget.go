package concurrent

import (
	"fmt"
	"strings"
)

// Budget bounds how many schedules a check explores per job: Name (as
// -twice.budget and TWICE_BUDGET spell it), Runs (the most schedules run) and
// Depth (the PCT depth used when sampling).
//
// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
type Budget struct {
	Name  string
	Runs  int
	Depth int
}

// The budgets: Quick suits -short runs, Default the usual test run, Thorough
// CI jobs that can afford more.
var (
	// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
	Quick = Budget{Name: "quick", Runs: 20, Depth: 2}
	// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
	Default = Budget{Name: "default", Runs: 100, Depth: 3}
	// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
	Thorough = Budget{Name: "thorough", Runs: 1000, Depth: 3}
)

// ParseBudget returns the budget with this name (quick, default, thorough).
//
// Deprecated: use twice.Budget (twice.QuickBudget, twice.DefaultBudget, twice.ThoroughBudget) and twice.WithBudget.
func ParseBudget(name string) (Budget, error) {
	var names []string
	for _, b := range []Budget{Quick, Default, Thorough} {
		if b.Name == name {
			return b, nil
		}
		names = append(names, b.Name)
	}
	return Budget{}, fmt.Errorf("concurrent: unknown budget %q: use one of %s", name, strings.Join(names, ", "))
}
