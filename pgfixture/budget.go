package pgfixture

import (
	"container/list"
	"context"
	"sync"
)

// connBudget is a weighted semaphore over the connection slots of one
// server that pgfixture and its callers may use. It is FIFO: a request that
// cannot be met waits in line, and nobody overtakes it, so a large request
// (a whole check's connections) is not starved by a stream of small ones
// (fixture databases' control pools). Waiting respects the caller's context.
type connBudget struct {
	size int // slots in all (under mu); a request for more never fits

	// reclaim, if set, frees slots held by something idle (warm fixture
	// databases) and reports whether it freed any. A request that has to
	// wait calls it until the request is met or nothing idle is left.
	reclaim func() bool

	mu      sync.Mutex
	used    int
	waiters list.List // of *connWaiter, oldest first
}

type connWaiter struct {
	n     int
	ready chan struct{} // closed once the slots are granted
}

func newConnBudget(size int, reclaim func() bool) *connBudget {
	return &connBudget{size: max(size, 0), reclaim: reclaim}
}

// capacity is the slots in all.
func (b *connBudget) capacity() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.size
}

// grow raises the slots in all to size (never lowers them) and grants the
// waiters that now fit.
func (b *connBudget) grow(size int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if size > b.size {
		b.size = size
		b.grantLocked()
	}
}

// tryAcquire takes n slots if they are free now and nobody waits before.
func (b *connBudget) tryAcquire(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.waiters.Len() == 0 && b.size-b.used >= n {
		b.used += n
		return true
	}
	return false
}

// acquire takes n slots, waiting in line until they are free or ctx is
// done. The caller checks n <= size first: a larger request would wait
// forever.
func (b *connBudget) acquire(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	b.mu.Lock()
	if b.waiters.Len() == 0 && b.size-b.used >= n {
		b.used += n
		b.mu.Unlock()
		return nil
	}
	w := &connWaiter{n: n, ready: make(chan struct{})}
	elem := b.waiters.PushBack(w)
	b.mu.Unlock()

	// Idle holders give way before anyone waits for busy ones.
	for b.reclaim != nil && ctx.Err() == nil && !granted(w) {
		if !b.reclaim() {
			break
		}
	}
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	b.mu.Lock()
	select {
	case <-w.ready:
		// Granted just as ctx ended: give the slots back to the line.
		b.used -= n
	default:
		b.waiters.Remove(elem)
	}
	b.grantLocked() // the line may move now that this request left it
	b.mu.Unlock()
	return ctx.Err()
}

func granted(w *connWaiter) bool {
	select {
	case <-w.ready:
		return true
	default:
		return false
	}
}

// release gives n slots back and grants the waiters they let through.
func (b *connBudget) release(n int) {
	if n <= 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.used < 0 {
		panic("pgfixture: internal error: more connection slots released than reserved")
	}
	b.grantLocked()
}

// grantLocked grants waiters in order while the first one fits; b.mu is
// held.
func (b *connBudget) grantLocked() {
	for e := b.waiters.Front(); e != nil; e = b.waiters.Front() {
		w := e.Value.(*connWaiter)
		if b.size-b.used < w.n {
			return
		}
		b.used += w.n
		b.waiters.Remove(e)
		close(w.ready)
	}
}

// waiting reports whether a request is waiting for slots.
func (b *connBudget) waiting() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.waiters.Len() > 0
}

// inUse returns the slots taken now.
func (b *connBudget) inUse() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// slots is a reservation of n slots of a budget, given back once.
type slots struct {
	b    *connBudget
	n    int
	once sync.Once
}

func (s *slots) release() {
	if s == nil {
		return
	}
	s.once.Do(func() { s.b.release(s.n) })
}
