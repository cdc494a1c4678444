package twice

import (
	"time"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/options"
	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/pgfixture"
)

// Option changes how a check runs or compares. Options compose; later ones
// win where they set the same thing.
type Option interface{ apply(*config) }

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is what the options set: internal/options' Config, and what they
// say in twice's own types.
type config struct {
	options.Config
	budget    *Budget               // WithBudget: budget.go
	queue     queueConfig           // the queue's semantics: queue.go
	followUps queue.Follow[Attempt] // WorkFollowUps: internal/queue/followups.go
	// pick, when set, chooses which of the planned scenarios run (a rapid
	// check draws them); nil runs them all.
	pick func(all []Scenario, b Budget) []Scenario
}

// Defaults.
const (
	DefaultAttemptTimeout = 10 * time.Second
	DefaultMaxDeliveries  = 5
)

// The check's clock starts here in every scenario.
var clockStart = time.Date(2026, time.October, 12, 9, 0, 0, 0, time.UTC)

func newConfig(opts []Option) *config {
	c := &config{Config: options.New(DefaultAttemptTimeout, DefaultMaxDeliveries, clockStart)}
	for _, o := range opts {
		if o != nil {
			o.apply(c)
		}
	}
	return c
}

// EffectPolicy declares how often an effect of kind ("email", "payment",
// "webhook") may happen compared with one clean run: effects.ExactlyOnce (the
// default), effects.AtLeastOnce ("a rare duplicate beats a missing one") or
// effects.AtMostOnce. The check verifies the policy under every scenario.
func EffectPolicy(kind string, p effects.Policy) Option {
	return optionFunc(func(c *config) { c.Policies[kind] = p })
}

// The database comparison: IgnoreColumns, Normalize, ExcludeRows, Schemas
// and QueueTables are its whole vocabulary (each is a pgfixture snapshot
// option, applied to every snapshot of the check). The migration tools'
// bookkeeping tables (pgfixture.MigrationTables: goose_db_version,
// schema_migrations and the like) are never compared.

// IgnoreColumns leaves columns out of the database comparison, in addition
// to those filled by volatile defaults. A column is named "table.column",
// "schema.table.column", or "column" (in every table).
func IgnoreColumns(cols ...string) Option {
	return snapshotOption(pgfixture.IgnoreColumns(cols...))
}

// Normalize rewrites a column's printed value (named as for IgnoreColumns)
// before comparing; NULL is passed as "NULL".
func Normalize(col string, f func(string) string) Option {
	return snapshotOption(pgfixture.Normalize(col, f))
}

// ExcludeRows leaves out of the comparison the rows of table for which the
// SQL condition holds (for example a queue's own bookkeeping rows).
func ExcludeRows(table, condition string) Option {
	return snapshotOption(pgfixture.ExcludeRows(table, condition))
}

// Schemas narrows the schemas of the application's tables compared. By
// default every schema but PostgreSQL's own is compared. Schemas("app")
// compares app's tables, Schemas("public", "app") public's and app's.
// Either way the queue's own tables (QueueTables: river_job, gue_jobs,
// wherever they are) are still compared, and the migration tools'
// bookkeeping tables are not. A reference run that changed no compared
// table, but changed one Schemas leaves out, fails the check with the
// tables' names.
func Schemas(names ...string) Option {
	return snapshotOption(pgfixture.Schemas(names...))
}

// QueueTables names the queue's own tables ("table" in public,
// "schema.table" elsewhere): they are compared whatever Schemas says, since
// the jobs a job enqueues are part of what it did. The queue adapters set
// it (twiceriver: river_job; twicegue: gue_jobs).
func QueueTables(names ...string) Option {
	return snapshotOption(pgfixture.Tables(names...))
}

func snapshotOption(o pgfixture.SnapshotOption) Option {
	return optionFunc(func(c *config) { c.Snapshot = append(c.Snapshot, o) })
}

// WithoutDuplicateEnqueue switches off the duplicate-enqueue scenario. The
// reason is required and printed with every report (for example "enqueued in
// the same transaction as the order, so the producer cannot enqueue twice").
func WithoutDuplicateEnqueue(reason string) Option {
	return optionFunc(func(c *config) { c.DupEnqueueOff = reason })
}

// FreshSessionsPerDelivery starts every delivery on fresh sessions, as a
// pool that hands each delivery a new connection would. By default only a
// scenario's first delivery does, and its redeliveries reuse the worker's
// sessions. With it, a redelivery finds nothing an earlier delivery left on
// its session. A finding that names such state and goes away with it was
// caused by that state.
func FreshSessionsPerDelivery() Option {
	return optionFunc(func(c *config) { c.FreshPerDelivery = true })
}

// LateRedrive adds, for every effect point, a scenario where the attempt dies
// right after the effect was applied and the job is redriven after d on the
// check's clock — a human redriving a dead job days later, when providers
// have forgotten its idempotency key (they remember keys for about a day).
func LateRedrive(d time.Duration) Option {
	return optionFunc(func(c *config) {
		if d > 0 {
			c.Redrives = append(c.Redrives, d)
		}
	})
}

// AttemptTimeout bounds one attempt; an attempt still running then is
// reported as hung, with the point where it hung. Default 10s.
func AttemptTimeout(d time.Duration) Option {
	return optionFunc(func(c *config) { c.AttemptTimeout = d })
}

// MaxDeliveries bounds how often the queue delivers one job when attempts
// crash or return errors; hitting it is a finding. Default 5.
func MaxDeliveries(n int) Option {
	return optionFunc(func(c *config) { c.MaxDeliveries = n })
}

// Only runs just the scenario with this token (as printed on a report's
// replay line) after the reference run. The -twice.run flag and TWICE_RUN do
// the same from the command line.
func Only(token string) Option {
	return optionFunc(func(c *config) { c.Only = token })
}

// OnServer runs the check on s instead of the process's shared server.
func OnServer(s *pgfixture.Server) Option {
	return optionFunc(func(c *config) { c.Server = s })
}

// KeepFailedDatabase keeps the check's database when the check fails, and
// puts its masked URL in Report.KeptDatabase, for inspection with psql.
// AssertIdempotent and ExpectIdempotent set it: they keep the database of
// the test they fail. Without it, Check hands its database back (reset, for
// the next check of the same schema) whatever the verdict, so checks that
// are expected to fail leave nothing behind. TWICE_KEEP_DB=1 keeps every
// database.
func KeepFailedDatabase() Option {
	return optionFunc(func(c *config) { c.KeepFailed = true })
}

// TestName names the test on the report's replay line; AssertIdempotent
// sets it from the TB.
func TestName(name string) Option {
	return optionFunc(func(c *config) { c.TestName = name })
}
