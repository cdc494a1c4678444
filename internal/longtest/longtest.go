// Package longtest is the one switch of this repository's long tests:
// TWICE_LONG_TESTS=1 runs them. Without it, `go test ./...` runs the fast
// tests only; .ci/run turns it on for its `go test -race` run.
//
// A long test is one that repeats what a fast test already shows, for more
// confidence: determinism over many runs, every story checked twice (crash
// states), test processes killed and restarted, rapid shrinking a failure.
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long tests on.
const Env = "TWICE_LONG_TESTS"

// Enabled reports whether TWICE_LONG_TESTS=1 is set.
func Enabled() bool { return os.Getenv(Env) == "1" }

// Skip skips t unless the long tests are on. why says what makes t long.
func Skip(t testing.TB, why string) {
	t.Helper()
	if !Enabled() {
		t.Skipf("long test (%s): %s=1 runs it", why, Env)
	}
}
