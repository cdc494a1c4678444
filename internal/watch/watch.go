// Package watch follows a running check for the test that waits on it:
// where it stands (Progress: the scenario running), a line every few
// seconds in the test's log, and one line to stderr just before go test's
// -timeout would end the binary, naming the scenario running (Check).
//
// twice keeps AssertIdempotent and ExpectIdempotent, which start the watch.
package watch

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Progress is where a running check stands, for the test that waits on it.
// A nil *Progress follows nothing.
type Progress struct {
	mu    sync.Mutex
	job   string
	n     int    // scenarios started, the reference run included
	token string // the scenario running
}

// Start records that the check of job started the scenario token.
func (p *Progress) Start(job, token string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.job = job
	p.n++
	p.token = token
	p.mu.Unlock()
}

// Where says where the check stands, in the words of the log.
func (p *Progress) Where() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		return "is setting up its database"
	}
	token := p.token
	if token == "concurrent:" {
		token = "an interleaving being explored"
	}
	return fmt.Sprintf("is running scenario %d (%s)", p.n, token)
}

// Settings say how a test watches its check.
type Settings struct {
	Every  time.Duration // how often a long check logs where it stands
	Margin time.Duration // how long before go test's -timeout the deadline line is written
	Stderr io.Writer     // where it goes: the test's own log is lost when the binary panics
}

// Default is how a test watches its check unless told otherwise.
var Default = Settings{Every: 5 * time.Second, Margin: 2 * time.Second, Stderr: os.Stderr}

// TB is what the watch needs of a test.
type TB interface {
	Name() string
	Logf(format string, args ...any)
}

// deadliner is a test with a -timeout deadline (*testing.T).
type deadliner interface {
	Deadline() (time.Time, bool)
}

// Check logs, while a check runs, where it stands every w.Every
// (tb.Logf: go test -v streams it), and writes one line to stderr just
// before go test's -timeout would panic, naming the scenario running. It
// only watches tests that have a deadline (*testing.T), so fakes and
// rapid's T stay quiet. The returned function stops it and waits for it.
func Check(tb TB, job string, p *Progress, w Settings) (stop func()) {
	d, ok := tb.(deadliner)
	if !ok {
		return func() {}
	}
	var alarm <-chan time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	if deadline, ok := d.Deadline(); ok {
		timer.Reset(max(time.Until(deadline)-w.Margin, 0))
		alarm = timer.C
	}
	done, exited := make(chan struct{}), make(chan struct{})
	ticker := time.NewTicker(w.Every)
	go func() {
		defer close(exited)
		defer ticker.Stop()
		defer timer.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				tb.Logf("twice: the check of %s %s", job, p.Where())
			case <-alarm:
				alarm = nil
				fmt.Fprintf(w.Stderr, "twice: %s: go test -timeout is about to end the test binary; the check of %s %s "+
					"(raise -timeout, or run fewer scenarios: -short, -twice.budget=quick, or -twice.run=TOKEN)\n",
					tb.Name(), job, p.Where())
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-exited
		})
	}
}
