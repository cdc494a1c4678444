package generators_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/twicekit/twicekit/internal/leakcheck"
)

func TestMain(m *testing.M) {
	flag.Parse()
	// The shrink-target tests fail on purpose inside a recording TB: keep
	// their fail files out of the repository.
	if err := flag.Set("rapid.nofailfile", "true"); err != nil {
		panic(err)
	}
	leakcheck.Exit(m.Run())
}

// recTB is a testing.TB that records failures instead of failing the test,
// so a test can run rapid.Check on a property that fails on purpose.
// Unused methods go to the real test.
type recTB struct {
	testing.TB
	name   string
	errors []string
	fatals []string
	logs   []string
}

func newRecTB(t *testing.T) *recTB { return &recTB{TB: t, name: t.Name() + "/recorded"} }

func (r *recTB) Helper()      {}
func (r *recTB) Name() string { return r.name }
func (r *recTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recTB) Log(args ...any) { r.logs = append(r.logs, fmt.Sprint(args...)) }
func (r *recTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recTB) Error(args ...any) { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *recTB) Fatalf(format string, args ...any) {
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
}
func (r *recTB) Fatal(args ...any) { r.fatals = append(r.fatals, fmt.Sprint(args...)) }
func (r *recTB) Fail()             { r.errors = append(r.errors, "Fail") }
func (r *recTB) FailNow()          { r.fatals = append(r.fatals, "FailNow") }
func (r *recTB) Failed() bool      { return len(r.errors)+len(r.fatals) > 0 }
func (r *recTB) Output() string    { return strings.Join(r.logs, "\n") }
