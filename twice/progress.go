package twice

import "github.com/twicekit/twicekit/internal/watch"

// progress is where a running check stands, for the test that waits on it
// (internal/watch).
type progress = watch.Progress

// watchSettings say how a test watches its check.
type watchSettings = watch.Settings

var defaultWatch = watch.Default

// watchCheck logs, while a check runs, where it stands, and writes one line
// to stderr just before go test's -timeout would end the binary
// (watch.Check). The returned function stops it and waits for it.
func watchCheck(tb TB, job string, p *progress, w watchSettings) (stop func()) {
	return watch.Check(tb, job, p, w)
}
