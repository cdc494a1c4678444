package inorder

import "sync"

// Start makes the lanes (makeLanes: the check's own first, then the others
// it could make, with a note saying why there are fewer than asked) on a
// goroutine of its own while the caller goes on, and returns the function
// that waits for them. The first wait hands each lane made after the first
// to made, even on an error (the lanes made so far, to be closed); wait
// may be called more than once.
func Start[L any](makeLanes func() ([]L, string, error), made func(extra L)) (wait func() ([]L, string, error)) {
	type result struct {
		lanes []L
		note  string
		err   error
	}
	ch := make(chan result, 1)
	go func() {
		lanes, note, err := makeLanes()
		ch <- result{lanes, note, err}
	}()
	var once sync.Once
	var m result
	return func() ([]L, string, error) {
		once.Do(func() {
			m = <-ch
			for _, l := range m.lanes[1:] {
				made(l)
			}
		})
		if m.err != nil {
			return nil, "", m.err
		}
		return m.lanes, m.note, nil
	}
}

// Make returns the lanes: own first, then up to n-1 more from next. It
// makes fewer when next has no room for another (ok false: it never waits
// for room) and returns the note full words for the count it made. On an
// error it returns the lanes made so far, to be closed.
func Make[L any](own L, n int, next func() (lane L, ok bool, err error), full func(made int) string) ([]L, string, error) {
	out := []L{own}
	for len(out) < n {
		l, ok, err := next()
		if err != nil {
			return out, "", err
		}
		if !ok {
			return out, full(len(out)), nil
		}
		out = append(out, l)
	}
	return out, "", nil
}
