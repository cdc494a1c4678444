// Package checkstate holds the state of one check that every step reads
// and writes: State, generic in twice's Attempt, which twice's checker
// embeds.
//
// It owns what a check (or one of its lanes) reuses across its scenarios:
// its options, its database and worker, the effect log, the connections'
// reservation given back and the database dropped or kept on Close, and
// what the check shares with its lanes, the seeded state and the fakes'
// trouble (state.go).
// It owns the scenario running: its clock, the effect calls made with a
// foreign context, the attempts started and the attempt of each run, the
// first error of a queue hook, the follow-ups, what the worker sessions
// were seen with; Reset starts a scenario from the seeded state, and World
// reads what it left (state.go, attempts.go, queue.go).
// It wires the effect fakes: the payment provider on the check's clock,
// the router behind http.DefaultTransport with the mounted hosts, each
// worker's handles, base-URL servers and fakes (effects.go).
// It makes the concurrent scenarios' workers, and a worker's *sql.DB on
// the connector the options name; it gives the workers fresh sessions, and
// ends the sessions the check did not open (workers.go).
// It readies a worker for an attempt (fresh sessions under
// FreshSessionsPerDelivery, what earlier deliveries left on them), begins
// and ends an attempt on its worker, and asks PostgreSQL about a hung one:
// whether its statement still runs, who holds the lock it waits for
// (attempts.go).
// It runs the queue's fetch and gives its hooks their Delivery, and keeps
// the follow-ups' runs and limits by job ID (queue.go).
// It resets the database to the seeded state, and prepares the world's
// fingerprints (seed.go).
//
// twice keeps the checker (State, its options and its job), the gate that
// tells whose attempt an effect call is, how a scenario is played,
// compared and recorded, and the Attempt and its records.
package checkstate
