package twice

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress is where a running check stands, for the test that waits on it.
type progress struct {
	mu    sync.Mutex
	job   string
	n     int    // scenarios started, the reference run included
	token string // the scenario running
}

func (p *progress) start(job, token string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.job = job
	p.n++
	p.token = token
	p.mu.Unlock()
}

func (p *progress) where() string {
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

// watchSettings say how a test watches its check.
type watchSettings struct {
	every  time.Duration // how often a long check logs where it stands
	margin time.Duration // how long before go test's -timeout the deadline line is written
	stderr io.Writer     // where it goes: the test's own log is lost when the binary panics
}

var defaultWatch = watchSettings{every: 5 * time.Second, margin: 2 * time.Second, stderr: os.Stderr}

// deadliner is a test with a -timeout deadline (*testing.T).
type deadliner interface {
	Deadline() (time.Time, bool)
}

// watchCheck logs, while a check runs, where it stands every w.every
// (tb.Logf: go test -v streams it), and writes one line to stderr just
// before go test's -timeout would panic, naming the scenario running. It
// only watches tests that have a deadline (*testing.T), so fakes and
// rapid's T stay quiet. The returned function stops it and waits for it.
func watchCheck(tb TB, job string, p *progress, w watchSettings) (stop func()) {
	d, ok := tb.(deadliner)
	if !ok {
		return func() {}
	}
	var alarm <-chan time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	if deadline, ok := d.Deadline(); ok {
		timer.Reset(max(time.Until(deadline)-w.margin, 0))
		alarm = timer.C
	}
	done, exited := make(chan struct{}), make(chan struct{})
	ticker := time.NewTicker(w.every)
	go func() {
		defer close(exited)
		defer ticker.Stop()
		defer timer.Stop()
		for {
			select {
			case <-done:
				return
			case <-ticker.C:
				tb.Logf("twice: the check of %s %s", job, p.where())
			case <-alarm:
				alarm = nil
				fmt.Fprintf(w.stderr, "twice: %s: go test -timeout is about to end the test binary; the check of %s %s "+
					"(raise -timeout, or run fewer scenarios: -short, -twice.budget=quick, or -twice.run=TOKEN)\n",
					tb.Name(), job, p.where())
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
