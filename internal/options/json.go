package options

import (
	"cmp"

	"github.com/twicekit/twicekit/internal/concurrentplay"
	"github.com/twicekit/twicekit/internal/report"
	"github.com/twicekit/twicekit/internal/scenarios"
)

// JSON is the options as the JSON report names them (twice's JSONOptions),
// but for the budget and the follow-ups, which twice words.
func (c *Config) JSON() report.JSONOptions {
	o := report.JSONOptions{
		Isolation:        concurrentplay.Isolation(c.Conc.Isolation),
		Policies:         report.Strings(c.Policies),
		DuplicateEnqueue: cmp.Or(c.DupEnqueueOff, "checked"),
		Concurrency:      cmp.Or(c.PairOff(concurrentplay.SameJob), "checked"),
		LateRedrives:     report.Map(c.Redrives, scenarios.ShortDuration),
		MaxDeliveries:    c.MaxDeliveries,
		AttemptTimeout:   c.AttemptTimeout.String(),
		Only:             c.Only,
		Runner:           c.Runner.String(),
		FreshSessions:    c.FreshPerDelivery,
	}
	if c.Periodic.On() {
		o.Periodic = scenarios.ShortDuration(c.Periodic.NextRun(c.Start).Sub(c.Start))
	}
	return o
}
