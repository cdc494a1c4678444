package inject

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ErrStatementReplyLost is what the connection of a statement whose reply the
// check lost returns to pgx: PostgreSQL applied the statement (and committed
// it), then the connection broke before the job heard back. The job sees
// what pgx makes of a broken connection (often "conn closed"), as in
// production.
var ErrStatementReplyLost = errors.New("twice: the connection broke before the reply came: PostgreSQL applied the statement and committed it, but the job saw a connection error")

// wireMode is what a connection does with the reply of the statement in
// flight on it.
type wireMode int

const (
	// passThrough: the reply goes to pgx as PostgreSQL sent it.
	passThrough wireMode = iota
	// implicitCommit: the statement runs inside a BEGIN the check sent; at its
	// ReadyForQuery the attempt reaches a second point, then the check sends
	// COMMIT (ROLLBACK if the statement failed) and hands pgx the reply of an
	// autocommit statement: the statement's results, the commit's error if
	// any, and an idle ReadyForQuery.
	implicitCommit
	// loseReply: the reply of the statement is read to its ReadyForQuery
	// (PostgreSQL applied and, outside a transaction block, committed it),
	// then the connection is cut and pgx gets a connection error.
	loseReply
)

// armed is what a connection knows about the statement in flight when its
// reply is not passed through.
type armed struct {
	mode      wireMode
	ctx       context.Context
	run       *Run
	label     string // the statement's label
	pid       uint32
	concluded bool // a CommandComplete, EmptyQueryResponse or ErrorResponse came
	failed    bool // an ErrorResponse came
}

// ImplicitLabel is the label of the point at which the implicit transaction
// of the autocommit statement labelled label commits.
func ImplicitLabel(label string) string { return Label("implicit COMMIT of: " + label) }

// Commits reports whether the statement commits when it succeeds: it ran
// outside a transaction block (its own implicit transaction), or it is a
// COMMIT. Its reply can be lost after PostgreSQL applied it.
func (s Step) Commits() bool {
	if s.Kind != SQL {
		return false
	}
	if s.Implicit {
		return true
	}
	w := firstWord(s.Label)
	return w == "COMMIT" || w == "END"
}

// autocommitWords are the statements that are not played as an implicit
// transaction: transaction control, the commands PostgreSQL refuses inside a
// transaction block, and session settings, whose commit nobody else sees.
var autocommitWords = map[string]bool{
	"BEGIN": true, "START": true, "COMMIT": true, "END": true, "ROLLBACK": true, "ABORT": true,
	"SAVEPOINT": true, "RELEASE": true, "PREPARE": true, "VACUUM": true, "ALTER SYSTEM": true,
	"CREATE DATABASE": true, "DROP DATABASE": true, "CREATE TABLESPACE": true, "DROP TABLESPACE": true,
	"REINDEX": true, "CLUSTER": true, "DISCARD": true, "SET": true, "RESET": true, "SHOW": true,
	"CHECKPOINT": true, "LISTEN": true, "UNLISTEN": true,
}

// firstWord is the statement's first keyword, upper case, after comments
// ("CREATE DATABASE" and "ALTER SYSTEM" keep their second word; "CREATE
// INDEX CONCURRENTLY" and friends answer "CONCURRENTLY").
func firstWord(sql string) string {
	s := strings.TrimSpace(sql)
	for {
		switch {
		case strings.HasPrefix(s, "--"):
			_, rest, ok := strings.Cut(s, "\n")
			if !ok {
				return ""
			}
			s = strings.TrimSpace(rest)
			continue
		case strings.HasPrefix(s, "/*"):
			_, rest, ok := strings.Cut(s, "*/")
			if !ok {
				return ""
			}
			s = strings.TrimSpace(rest)
			continue
		}
		break
	}
	f := strings.Fields(strings.ToUpper(s))
	if len(f) == 0 {
		return ""
	}
	w := strings.TrimRight(f[0], ";(")
	if len(f) > 1 && (w == "CREATE" || w == "DROP" || w == "ALTER") {
		second := strings.TrimRight(f[1], ";")
		switch second {
		case "DATABASE", "SYSTEM", "TABLESPACE":
			return w + " " + second
		}
		if second == "INDEX" || second == "UNIQUE" {
			for _, x := range f[2:] {
				if strings.TrimRight(x, ";") == "CONCURRENTLY" {
					return "CONCURRENTLY"
				}
			}
		}
	}
	if w == "REFRESH" && strings.Contains(strings.Join(f, " "), " CONCURRENTLY") {
		return "CONCURRENTLY"
	}
	return w
}

// implicitStatement reports whether sql, about to be sent on c, runs as its
// own implicit transaction: the session is idle (no transaction block open)
// and the statement is not one of [autocommitWords].
func implicitStatement(c *pgx.Conn, sql string) bool {
	if c == nil || sql == "" || c.PgConn().TxStatus() != 'I' {
		return false
	}
	w := firstWord(sql)
	return w != "" && w != "CONCURRENTLY" && !autocommitWords[w]
}

// arm prepares c for the reply of the statement the attempt r is about to
// send at step s: in a plan that plays implicit transactions, an autocommit
// statement is sent inside a BEGIN and commits at a second point; a
// statement whose reply the plan loses has its connection cut once
// PostgreSQL applied it. It returns an error when the BEGIN failed.
func arm(ctx context.Context, r *Run, c *pgx.Conn, s Step) error {
	if c == nil {
		return nil
	}
	w, ok := c.PgConn().Conn().(*conn)
	if !ok {
		return nil // a connection not dialed through Conns (TLS wraps it): one point per statement
	}
	mode := passThrough
	switch {
	case r.plan.LoseReply == s.Index && s.Commits():
		mode = loseReply
	case r.plan.ImplicitTx && s.Implicit:
		mode = implicitCommit
	default:
		return nil
	}
	if mode == implicitCommit {
		if _, err := c.PgConn().Exec(ctx, "BEGIN").ReadAll(); err != nil {
			return fmt.Errorf("twice: beginning the implicit transaction of %q: %w", s.Label, err)
		}
	}
	w.mu.Lock()
	w.armed = &armed{mode: mode, ctx: ctx, run: r, label: s.Label, pid: s.Backend}
	w.mu.Unlock()
	return nil
}

// disarm ends what arm started when pgx is done with the statement: a
// statement that never reached PostgreSQL (pgx refused it before sending)
// leaves the BEGIN open, which is rolled back here.
func disarm(ctx context.Context, c *pgx.Conn) {
	if c == nil {
		return
	}
	w, ok := c.PgConn().Conn().(*conn)
	if !ok {
		return
	}
	w.mu.Lock()
	a := w.armed
	w.armed = nil
	w.mu.Unlock()
	if a == nil || a.mode != implicitCommit || c.IsClosed() || c.PgConn().TxStatus() != 'T' {
		return
	}
	_, _ = c.PgConn().Exec(context.WithoutCancel(ctx), "ROLLBACK").ReadAll()
}

// Read hands pgx what the server sent; while a statement's reply is armed it
// reads whole messages and acts at the statement's ReadyForQuery.
func (w *conn) Read(p []byte) (int, error) {
	w.mu.Lock()
	a := w.armed
	w.mu.Unlock()
	if a == nil && len(w.out) == 0 && len(w.in) == 0 {
		n, err := w.Conn.Read(p)
		// pgx's background reader may have been in this read when the
		// statement was armed (after its BEGIN's reply): what came is then
		// the armed statement's reply.
		w.mu.Lock()
		a = w.armed
		w.mu.Unlock()
		if a == nil || n == 0 {
			return n, err
		}
		w.in = append(w.in, p[:n]...)
		clear(p[:n])
	}
	for len(w.out) == 0 {
		if a == nil {
			w.out, w.in = w.in, nil
			break
		}
		msg, err := w.message()
		if err != nil {
			return 0, err
		}
		switch msg[0] {
		case 'C', 'I':
			a.concluded = true
		case 'E':
			a.concluded, a.failed = true, true
		}
		if msg[0] != 'Z' || !a.concluded {
			w.out = append(w.out, msg...)
			continue
		}
		reply, err := w.conclude(a, msg)
		w.mu.Lock()
		w.armed = nil
		w.mu.Unlock()
		if err != nil {
			return 0, err
		}
		w.out = append(w.out, reply...)
		a = nil
	}
	n := copy(p, w.out)
	w.out = w.out[n:]
	if len(w.out) == 0 {
		w.out = nil
	}
	return n, nil
}

// message reads one whole backend message (type, length, body).
func (w *conn) message() ([]byte, error) {
	for {
		if len(w.in) >= 5 {
			size := int(binary.BigEndian.Uint32(w.in[1:5])) + 1
			if size < 5 {
				return nil, fmt.Errorf("twice: internal error: a backend message of length %d", size-1)
			}
			if len(w.in) >= size {
				msg := w.in[:size:size]
				w.in = w.in[size:]
				return msg, nil
			}
		}
		buf := make([]byte, 8192)
		n, err := w.Conn.Read(buf)
		w.in = append(w.in, buf[:n]...)
		if err != nil && n == 0 {
			return nil, err
		}
	}
}

// conclude acts at the ReadyForQuery z of an armed statement and returns
// what pgx gets in its place.
func (w *conn) conclude(a *armed, z []byte) ([]byte, error) {
	status := z[5]
	switch a.mode {
	case loseReply:
		if a.failed {
			return z, nil // nothing was applied: the error is the reply
		}
		_ = w.Close()
		return nil, ErrStatementReplyLost
	case implicitCommit:
		switch status {
		case 'E':
			// PostgreSQL aborts an implicit transaction at its error: roll
			// back at once, no point.
			return w.finish("ROLLBACK", false)
		case 'T':
			if _, err := a.run.EnterStep(a.ctx, Step{Kind: SQL, Label: ImplicitLabel(a.label), Backend: a.pid}); err != nil {
				_ = w.Close()
				return nil, err
			}
			return w.finish("COMMIT", true)
		}
	}
	return z, nil // the statement ended the transaction itself
}

// finish sends a simple query (COMMIT or ROLLBACK) on the connection and
// returns its reply as pgx is to see it after the statement's: its errors
// (when keepErrors) and notices, and its ReadyForQuery.
func (w *conn) finish(query string, keepErrors bool) ([]byte, error) {
	q := make([]byte, 0, 6+len(query))
	q = append(q, 'Q', 0, 0, 0, 0)
	q = append(q, query...)
	q = append(q, 0)
	binary.BigEndian.PutUint32(q[1:5], uint32(len(q)-1))
	if _, err := w.Conn.Write(q); err != nil {
		return nil, err
	}
	var out []byte
	for {
		msg, err := w.message()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		switch msg[0] {
		case 'Z':
			return append(out, msg...), nil
		case 'E':
			if keepErrors {
				out = append(out, msg...)
			}
		case 'N', 'S', 'A':
			out = append(out, msg...)
		}
	}
}
