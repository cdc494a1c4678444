package twice

import (
	"github.com/twicekit/twicekit/internal/baseurl"
)

// BaseURL returns the base URL, "http://127.0.0.1:<port>", of an HTTP
// server the check owns for host on the worker the attempt runs on, for an
// app that builds its own http.Client (its own http.Transport) from a
// configured base URL. host is a host mounted with HTTPHost
// ("partner.example"), or the payment provider's ("payments.twice.test";
// a.Payments itself is taken too).
//
// Every request the server gets is handed to the attempt's router as a
// request to host: a point of the attempt and an effect, exactly as through
// a.HTTP. It is recorded and labelled under host, never under the loopback
// port ("http POST partner.example/v1/charges"), and a handler's
// "Idempotent-Replayed: true" answer is not recorded again. When the
// attempt crashes after the request was applied, or its reply is lost, the
// server closes the connection with no response, so the app's client gets
// an error, as from a reply lost on the network. The requests carry no
// attempt's context: they are the attempt running on that worker, as a
// call on its handles without a context is; each worker of the concurrent
// scenarios has servers of its own.
//
// A host nobody mounted fails the check with an error naming HTTPHost; the
// URL returned then is one that refuses every connection. The servers
// start at the first ask and close with the check. An error the job
// returns that names a server's address names host instead, so reports
// are the same on every run.
func (a *Attempt) BaseURL(host string) string { return a.baseURLs.URL(host) }

// baseURLs are the servers a.BaseURL hands out on one worker
// (internal/baseurl).
type baseURLs = baseurl.Servers
