// Package handles holds the plumbing of an attempt's handles that needs no
// type of twice. Its Gate makes an effect call a point of the attempt it
// belongs to, asking the worker's owner whose the call is, and refuses a
// call made between attempts as foreign; it mounts the fakes of partners'
// APIs on a router (gate.go). It hooks http.DefaultTransport so that a
// request carrying an attempt's context goes through that attempt's router
// and never to the network, and keeps the transport that reaches the
// test's own loopback servers (default_transport.go). It builds the
// postgres:// URL that a database/sql driver gets for a worker's sessions,
// and opens the connector the options name on it (driver_url.go). It names a check and its workers in the error of a
// server whose connection limit the check does not fit, and says when a
// clean run's error means that pgx does not know a type the application
// registers (pool.go).
// It makes the effect handles of one worker (Effects): the mailer, the
// webhook sink, the recorder and the HTTP client on a router mounting the
// options' hosts, its base-URL servers and its fakes (effects.go).
//
// twice keeps the options (SQLDriver, SQLConnector, ConfigurePool,
// HTTPHost), the attempts and their workers' effect handles by worker, and
// hands in, for a request's context, the transport of the attempt it
// carries, for a gate, where it records a foreign call and the attempt of a
// run, and, for a worker's effect handles, how to make its base-URL servers
// and its fakes.
package handles
