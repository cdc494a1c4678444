package settings

import (
	"flag"
	"os"
	"testing"
)

// Settings from the command line, with the environment as fallback:
//
//	-twice.run=TOKEN        TWICE_RUN     run only the scenario with this token
//	-twice.budget=NAME      TWICE_BUDGET  quick, default or thorough (-short means quick)
//	-twice.parallel=N       TWICE_PARALLEL  scenarios played at once (auto: one per core)
//	-twice.shard=k/n        TWICE_SHARD     play only shard k of n of every check's scenarios
var (
	runToken     = flag.String("twice.run", "", "run only the twice scenario with this `token` (as printed on a failure's replay line); env TWICE_RUN")
	parallelFlag = flag.String("twice.parallel", "", "play up to `N` twice scenarios of a check at once, each on its own database (auto: one per core; default 1); env TWICE_PARALLEL")
	shardFlag    = flag.String("twice.shard", "", "play only shard `k/n` of every twice check's scenarios (the reference runs play in every shard; twice-merge joins the reports); env TWICE_SHARD")
	budgetFlag   = flag.String("twice.budget", "", "how much a check explores: `quick`, default or thorough (-short means quick); env TWICE_BUDGET")
)

// Budget is the budget named by -twice.budget, else TWICE_BUDGET
// (with where it came from, for errors), or "" when neither is set.
func Budget() (name, from string) {
	if *budgetFlag != "" {
		return *budgetFlag, "-twice.budget"
	}
	return os.Getenv("TWICE_BUDGET"), "TWICE_BUDGET"
}

// Parallel is -twice.parallel, else TWICE_PARALLEL, with where it
// came from, or "" when neither is set.
func Parallel() (value, from string) {
	if *parallelFlag != "" {
		return *parallelFlag, "-twice.parallel"
	}
	return os.Getenv("TWICE_PARALLEL"), "TWICE_PARALLEL"
}

// Shard is -twice.shard, else TWICE_SHARD, with where it came from.
func Shard() (value, from string) {
	if *shardFlag != "" {
		return *shardFlag, "-twice.shard"
	}
	return os.Getenv("TWICE_SHARD"), "TWICE_SHARD"
}

// Short reports whether this is a test binary run with -short.
func Short() bool {
	return testing.Testing() && flag.Parsed() && testing.Short()
}

// Verbose reports whether this is a test binary run with -v.
func Verbose() bool {
	return testing.Testing() && flag.Parsed() && testing.Verbose()
}

// Run is the token of -twice.run, else TWICE_RUN.
func Run() string {
	if *runToken != "" {
		return *runToken
	}
	return os.Getenv("TWICE_RUN")
}
