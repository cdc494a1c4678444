package twice

import "github.com/twicekit/twicekit/internal/concurrentplay"

// IsolationLevel is the transaction isolation the concurrent scenarios'
// workers use (PostgreSQL's default_transaction_isolation).
type IsolationLevel int

// The isolation levels.
const (
	// ReadCommitted is PostgreSQL's default.
	ReadCommitted IsolationLevel = iota
	// RepeatableRead: a concurrent update of a row the transaction wants to
	// change fails with a serialization failure (40001).
	RepeatableRead
	// Serializable: PostgreSQL aborts one of two transactions whose reads and
	// writes could not have happened one after the other (40001).
	Serializable
)

func (l IsolationLevel) String() string { return concurrentplay.Isolation(int(l)) }

// Isolation runs the concurrent scenarios' attempts under this isolation
// level (default ReadCommitted). Serialization failures and deadlocks are
// errors the queue redelivers, so a check-then-act job can pass under
// Serializable and be flagged under ReadCommitted.
func Isolation(l IsolationLevel) Option {
	return optionFunc(func(c *config) { c.Conc.Isolation = int(l) })
}

// ScheduleSeed seeds the PCT samples drawn when a job has more interleavings
// than the budget (default 1). The same seed always draws the same samples.
func ScheduleSeed(seed uint64) Option {
	return optionFunc(func(c *config) { c.Conc.Seed = seed })
}

// WithoutConcurrency switches off the concurrent scenarios, the concurrent
// duplicates among them. Say why (for example "the queue runs this job
// under a per-order advisory lock"); the reason is kept in the test, and in
// the error when a concurrent token is replayed anyway. A queue that only
// never runs one job ID twice at once says WithoutOverlappingDeliveries.
func WithoutConcurrency(reason string) Option {
	return optionFunc(func(c *config) { c.Conc.Off = reason })
}

// ExploreAllInterleavings keeps exploring after the first concurrent
// scenario that breaks a promise (by default the exploration stops there,
// after the named overlap scenarios).
func ExploreAllInterleavings() Option {
	return optionFunc(func(c *config) { c.Conc.All = true })
}
