package pgserver

import (
	"errors"
	"strings"
	"testing"
)

func TestImageUnavailableError(t *testing.T) {
	err := imageUnavailableError("postgres:15-alpine", errors.New("dial tcp: lookup registry-1.docker.io:\n no such host"))
	want := "container: image postgres:15-alpine is not available and cannot be pulled: build one from this machine's PostgreSQL with `go run github.com/twicekit/twicekit/pgfixture/cmd/twice-postgres-image` and set TWICE_POSTGRES_IMAGE to the name it prints, or set TWICE_POSTGRES_IMAGE to an image the engine has (pull: dial tcp: lookup registry-1.docker.io: no such host)"
	if err.Error() != want {
		t.Errorf("got  %s\nwant %s", err, want)
	}
}

func TestRyukExplain(t *testing.T) {
	err := errors.New("create container: reaper: new reaper: run container: no such host")
	got := ryukChoice{}.explain(err).Error()
	if !strings.Contains(got, "set TESTCONTAINERS_RYUK_DISABLED=true") {
		t.Errorf("a reaper failure does not say what to set: %s", got)
	}
	if got := (ryukChoice{disabled: true}).explain(err); got != err {
		t.Errorf("with Ryuk turned off by pgfixture, the error changed: %v", got)
	}
}
