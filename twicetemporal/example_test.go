package twicetemporal_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twicetemporal"
)

// A batch whose items are keyed and whose heartbeat follows each item's
// commit: a retry from any checkpoint applies each item once.
func ExampleCheck() {
	rep := twicetemporal.Check(context.Background(), twicetemporal.Activity{Schema: schema, Seed: seed, Args: input,
		Activity: func(a *twice.Attempt) any { return (&Batch{Pool: a.Pool, Keyed: true}).Apply }})
	fmt.Println("idempotent:", rep.OK())
	// Output: idempotent: true
}

// An unkeyed increment: Temporal retries it after a crash that followed
// its commit, and it adds one again.
func ExampleAssertIdempotent() {
	tb := &recorder{name: "TestCounter"}
	twicetemporal.AssertIdempotent(tb, twicetemporal.Activity{Schema: schema, Seed: seed, Args: []any{1},
		Activity: func(a *twice.Attempt) any { return (&Counter{Pool: a.Pool}).Add }})
	fmt.Println("failed:", tb.failed)
	// Output: failed: true
}

// ExpectIdempotent lets the test go on.
func ExampleExpectIdempotent() {
	tb := &recorder{name: "TestBatch"}
	ok := twicetemporal.ExpectIdempotent(tb, twicetemporal.Activity{Schema: schema, Seed: seed, Args: input,
		Activity: func(a *twice.Attempt) any { return (&Batch{Pool: a.Pool, Keyed: true}).Apply }})
	fmt.Println(ok)
	// Output: true
}

// Twice gives the activity and Temporal's semantics to twice itself; its
// retries resume from the last heartbeat that reached the server.
func ExampleActivity_Twice() {
	job, opts := twicetemporal.Activity{Schema: schema, Seed: seed, Args: input,
		Activity: func(a *twice.Attempt) any { return (&Batch{Pool: a.Pool, Keyed: true, HeartbeatFirst: true}).Apply },
	}.Twice()
	rep := twice.Check(context.Background(), job, append(opts, twice.Only("crash@2"))...)
	fmt.Println(rep.OK(), rep.Tokens())
	// Output: false [crash@2]
}

// recorder is a twice.TB that records whether it failed, and what it said.
type recorder struct {
	name   string
	failed bool
	text   string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Name() string              { return r.name }
func (r *recorder) Logf(string, ...any)       {}
func (r *recorder) Errorf(f string, a ...any) { r.fail(f, a...) }
func (r *recorder) Fatalf(f string, a ...any) { r.fail(f, a...) }

func (r *recorder) fail(f string, a ...any) {
	r.failed = true
	r.text += strings.TrimSpace(fmt.Sprintf(f, a...)) + "\n"
}
