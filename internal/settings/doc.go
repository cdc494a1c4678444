// Package settings reads a check's settings from the command line, with the
// environment as fallback: the flags -twice.run, -twice.budget,
// -twice.parallel, -twice.shard and -twice.wall, and TWICE_RUN,
// TWICE_BUDGET, TWICE_PARALLEL, TWICE_SHARD and TWICE_WALL under them
// (settings.go). Each setting is returned with where it came from, for the
// errors that name it. It says whether the test binary runs with -short or
// -v (settings.go). It parses the wall budget the flag or the environment
// give, with the default when neither does (wall.go).
//
// twice keeps the options (Only, WithBudget, Parallel, Shard, WallBudget),
// which win over these settings, the named budgets and what a setting's
// value means.
package settings
