package options

import (
	"database/sql/driver"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/fakeserve"
	"github.com/twicekit/twicekit/internal/handles"
	"github.com/twicekit/twicekit/internal/queue"
	"github.com/twicekit/twicekit/internal/settings"
	"github.com/twicekit/twicekit/internal/shard"
	"github.com/twicekit/twicekit/internal/watch"
	"github.com/twicekit/twicekit/pgfixture"
)

// Config is what a check's options set; the files its fields name are
// twice's, where the options that set them are.
type Config struct {
	Policies       effects.Policies
	Snapshot       []pgfixture.SnapshotOption
	DupEnqueueOff  string
	LoseReplies    bool // LoseStatementReplies: statement_reply_lost.go
	AttemptTimeout time.Duration
	MaxDeliveries  int
	Only           string
	Server         *pgfixture.Server
	TestName       string
	KeepFailed     bool
	Start          time.Time
	SQLDriver      string                                     // the option that set SQLOpen, for errors: SQLDriver("postgres"), SQLConnector
	SQLOpen        func(dsn string) (driver.Connector, error) // a.DB's connector (sqldriver.go); nil: pgx's
	ConfigurePool  func(*pgxpool.Config)                      // the application's pool configuration (poolconfig.go)
	Redrives       []time.Duration
	Periodic       queue.Schedule // Periodic, PeriodicSchedule: periodic.go
	// EveryCrashPoint replays crash points that leave the same world as an
	// earlier one (crashstates.go).
	EveryCrashPoint bool
	// FreshPerDelivery starts every delivery on fresh sessions
	// (FreshSessionsPerDelivery: sessionstate.go).
	FreshPerDelivery bool
	// Progress, when set, follows the scenario running (AssertIdempotent
	// watches it for long checks and go test's -timeout).
	Progress     *watch.Progress
	ExactValues  bool           // ExactValues: internal/compare/varying.go
	OneReference bool           // no second clean run (only the benchmark that measures it)
	Parallel     *int           // Parallel: parallel.go
	Shard        *shard.Shard   // Shard: shard.go
	Conc         Concurrent     // concurrent scenarios: concurrent_options.go
	Effects      Effects        // the effect fakes: effects_wiring.go
	Wall         *time.Duration // WallBudget: wall.go
	PartialOK    string         // PartialCheck: wall.go
	Runner       queue.Runner   // LeaseQueue, LockingConsumer, InProcessScheduler: runner.go
	// OnPlan, when set, hears the plan once the reference run made it
	// ("N scenarios, about T each"): AssertIdempotent logs it under -v.
	OnPlan func(string)
}

// Concurrent is what the options say of the concurrent scenarios.
type Concurrent struct {
	Isolation int // twice's IsolationLevel: 0 is ReadCommitted
	Seed      uint64
	Off       string
	// OverlapsOff: WithoutOverlappingDeliveries (concurrent_duplicate.go).
	OverlapsOff string
	Duplicates  bool // ConcurrentDuplicates
	All         bool
}

// Effects is what the options say about the effect fakes.
type Effects struct {
	Hosts []handles.Host   // HTTPHost
	Fakes []fakeserve.Fake // ServeFake: fakeserver.go
}

// New is the configuration before any option: the attempt timeout, the
// deliveries' bound and the clock's start twice documents, -twice.run's
// scenario, and a database comparison that leaves out the migration tools'
// tables and compares generated keys up to renaming.
func New(attemptTimeout time.Duration, maxDeliveries int, start time.Time) Config {
	return Config{
		Policies:       effects.Policies{},
		AttemptTimeout: attemptTimeout,
		MaxDeliveries:  maxDeliveries,
		Start:          start,
		Only:           settings.Run(),
		Snapshot:       []pgfixture.SnapshotOption{pgfixture.ExcludeTables(pgfixture.MigrationTables()...), pgfixture.GeneratedKeys()},
	}
}
