package effects_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/leakcheck"
)

func TestMain(m *testing.M) { leakcheck.Exit(m.Run()) }

var (
	errCrashed   = errors.New("attempt crashed")
	errReplyLost = errors.New("reply lost")
)

// fakeGate hands out one Origin with increasing points and can refuse
// before or fail after.
type fakeGate struct {
	mu     sync.Mutex
	job    string
	point  int
	before error
	after  error
	calls  []string
}

func (g *fakeGate) Before(_ context.Context, c effects.Call) (effects.Origin, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, "before "+c.Kind+": "+c.Label)
	if g.before != nil {
		return effects.Origin{}, g.before
	}
	g.point++
	return effects.Origin{JobID: g.job, Attempt: 1, Point: g.point}, nil
}

func (g *fakeGate) After(_ context.Context, c effects.Call) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.calls = append(g.calls, "after "+c.Kind+": "+c.Label)
	return g.after
}

func (g *fakeGate) Calls() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.calls...)
}
