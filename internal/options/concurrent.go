package options

import (
	"github.com/twicekit/twicekit/internal/concurrentplay"
	"github.com/twicekit/twicekit/internal/scenarios"
)

// ConcurrentOff is what the options switched off of the concurrent
// scenarios.
func (c *Config) ConcurrentOff() concurrentplay.Off {
	return concurrentplay.Off{Concurrency: c.Conc.Off, Overlaps: c.Conc.OverlapsOff, DuplicateQueue: c.DupEnqueueOff, Duplicates: c.Conc.Duplicates}
}

// PairOff says why the check does not play a pair's scenarios ("": it
// plays them).
func (c *Config) PairOff(p concurrentplay.Pair) string { return c.ConcurrentOff().Pair(p) }

// DuplicatesByDefault reports whether the check plays the concurrent
// duplicates without being given a token.
func (c *Config) DuplicatesByDefault() bool { return c.ConcurrentOff().DuplicatesByDefault() }

// ConcurrentMayRun reports whether the check may play concurrent scenarios:
// they are not switched off and -twice.run does not pick a sequential one.
func (c *Config) ConcurrentMayRun() bool {
	return (c.PairOff(concurrentplay.SameJob) == "" || c.PairOff(concurrentplay.DuplicateJobs) == "") && (c.Only == "" || scenarios.IsConcurrentToken(c.Only))
}

// ConcurrentReusesCheckWorker reports whether the first attempt of the
// concurrent scenarios runs on the check's own worker; under another
// isolation level or database/sql driver both get new ones.
func (c *Config) ConcurrentReusesCheckWorker() bool {
	return c.Conc.Isolation == 0 && c.SQLOpen == nil
}

// WorkersNeeded is how many workers a check may make: its own, and one or
// two for the concurrent scenarios (see twice's concurrentWorkers).
func (c *Config) WorkersNeeded() int {
	return concurrentplay.WorkersNeeded(c.ConcurrentMayRun(), c.ConcurrentReusesCheckWorker())
}

// UnknownOnly is the error of an Only token that names no scenario of this
// job: it lists every token the job has, the concurrent ones included when
// the check plays them (scenarios.UnknownOnly).
func (c *Config) UnknownOnly(n, concurrentN int, sequential []string) error {
	return scenarios.UnknownOnly(c.Only, n, concurrentN, sequential, scenarios.Listing{
		SameJob:       c.PairOff(concurrentplay.SameJob) == "",
		Duplicates:    c.PairOff(concurrentplay.DuplicateJobs) == "" && c.DuplicatesByDefault(),
		ConcurrencyOn: c.Conc.Off == "",
	})
}
