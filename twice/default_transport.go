package twice

import (
	"context"
	"net/http"

	"github.com/twicekit/twicekit/internal/baseurl"
	"github.com/twicekit/twicekit/internal/handles"
)

// The requests a job sends through http.DefaultTransport with an attempt's
// context are the attempt's, never sent to the network; the transport is
// hooked once, when the package initializes (internal/handles).
func init() { handles.HookDefaultTransport(http.DefaultTransport, throughDefaultOf) }

// throughDefaultOf is the transport of the attempt ctx carries for its
// requests through http.DefaultTransport: its router, with a base URL's
// server named as its host (baseurl.go); nil when ctx carries no attempt.
func throughDefaultOf(ctx context.Context) http.RoundTripper {
	a := attemptOf(ctx)
	if a == nil || a.throughDefault == nil {
		return nil
	}
	return baseurl.Transport{RT: a.throughDefault, B: a.baseURLs}
}
