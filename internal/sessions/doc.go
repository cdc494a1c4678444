// Package sessions reads what PostgreSQL says of the check's sessions and
// of the sessions around them.
//
// It names the holder of a lock an attempt waits for: an attempt of the
// scenario (the one whose points ran on the holding backend, and the
// statement of its transaction that took the lock), the attempt itself on
// another of its connections, or a session the check did not open; and it
// describes a lock that the session of an attempt that returned still
// holds (locks.go). The names carry no PID, so a report is the same run
// after run. It says, in the report's words, that an attempt still waited
// for a lock after its timeout, who held it and what ends such a wait
// (words.go).
//
// It names the check's own sessions (WorkerName, OwnNames) and finds the
// others on the check's database: looked at until two looks agree,
// watched while the reference run's attempt runs, ended before a check
// and after a scenario so that none is blamed on another job
// (foreign.go). It waits until PostgreSQL has ended the sessions of the
// check's workers, so that a scenario starts on fresh sessions, after it
// ends them (fresh.go). It merges the sessions two looks saw, by PID,
// and gives its sessions as a caller's type of the same fields and back
// (foreign.go).
//
// It tells whether an error says the PostgreSQL server went away, opens a
// new connection to see whether it answers, and tells whether a worker's
// pool was closed (server.go).
//
// It names a session the check did not open as a report prints it, without
// its PID, and says that the job used a connection of its own: the sessions
// seen, the tables changed with no statement seen (words.go). It tells
// whether an attempt's latest statement is still running in PostgreSQL, so
// that an attempt past its timeout is slow, not hung (active.go).
//
// twice makes its problems (a lock wait, a lock held after Run, the job's own
// connection, a slow attempt, a server that went away, a closed pool) from
// what it reads.
package sessions
