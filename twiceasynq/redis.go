package twiceasynq

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/tidwall/redcon"

	"github.com/twicekit/twicekit/twice"
)

// The attempt's Redis: RedisClientOpt(a) is the address of a Redis the
// check owns for the attempt a, a fake each worker serves
// (twice.ServeFake), whose calls are the effects of the attempt running
// on that worker. An application builds its real *asynq.Client (or
// asynq.Inspector) on it. Every command goes to the store (store.go), on
// the database of the attempt's world, except asynq's enqueue scripts:
// those are the enqueue NewClient(a) makes (enqueue in followups.go), a
// point and an effect of the attempt, refused as asynq refuses it, and on
// acceptance written to the store too.

// RedisClientOpt returns the options of a Redis the check owns for the
// attempt a: call it in Job.Handler or Job.Mux, where the application
// builds its *asynq.Client (asynq.NewClient) or its asynq.Inspector. Every
// enqueue through that client is then what NewClient(a)'s is: a point of
// the attempt, an effect of kind EffectKind, refused as asynq's client
// refuses it (asynq.ErrTaskIDConflict, asynq.ErrDuplicateTask), and worked
// as a follow-up when Job.Mux is set. Its other commands reach a real
// Redis: Debian's redis-server when it is on the PATH, else an embedded
// miniredis; either starts empty in every scenario.
//
// The Redis listens on a loopback port of the attempt's worker
// (twice.ServeFake), so the calls of concurrent attempts are each their
// own. Given an attempt twiceasynq is not running, the options name a
// network that makes every command fail with what to do.
func RedisClientOpt(a *twice.Attempt) asynq.RedisClientOpt {
	if _, ok := attemptQueues.Load(a); !ok {
		return asynq.RedisClientOpt{Network: notAttemptsRedis, Addr: "twiceasynq.invalid:0"}
	}
	// A concurrent scenario holds an attempt at its points while the other
	// runs: longer than go-redis's 3 s read timeout, under load.
	return asynq.RedisClientOpt{Addr: a.FakeAddr(redisFake), ReadTimeout: time.Minute, WriteTimeout: time.Minute}
}

const notAttemptsRedis = "twiceasynq.RedisClientOpt got an attempt twiceasynq is not running: call it in Job.Handler or Job.Mux with the attempt they get"

// redisFake is the name of the attempt's Redis among the check's fakes.
const redisFake = "twiceasynq: the attempt's Redis"

// attemptRun is one attempt twiceasynq runs, while its handler is built
// and runs: NewClient and RedisClientOpt find it in attemptQueues, the
// attempt's Redis in its queue's onWorker.
type attemptRun struct {
	q *queue
	a *twice.Attempt
}

// running runs f with the attempt a registered.
func (q *queue) running(a *twice.Attempt, f func() error) error {
	r := &attemptRun{q: q, a: a}
	attemptQueues.Store(a, r)
	addr := a.FakeAddr(redisFake)
	q.mu.Lock()
	q.onWorker[addr] = r
	q.mu.Unlock()
	defer func() {
		attemptQueues.Delete(a)
		q.mu.Lock()
		if q.onWorker[addr] == r {
			delete(q.onWorker, addr)
		}
		q.mu.Unlock()
	}()
	return f()
}

// runOn is the attempt running on the worker whose Redis listens on
// addr, or nil.
func (q *queue) runOn(addr string) *attemptRun {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.onWorker[addr]
}

// serveRedis serves one connection to a worker's Redis: RESP read and
// written with redcon, with a connection to the store behind it.
func (q *queue) serveRedis(c *twice.FakeConn) {
	s := &session{q: q, c: c, addr: c.LocalAddr().String()}
	defer func() {
		if s.be != nil {
			s.be.close()
		}
	}()
	rd, wr := redcon.NewReader(c), redcon.NewWriter(c)
	for {
		cmds, err := rd.ReadCommands()
		if err != nil {
			return
		}
		for _, cmd := range cmds {
			if len(cmd.Args) == 0 {
				continue
			}
			if !s.handle(cmd, wr) {
				_ = wr.Flush()
				return
			}
		}
		if err := wr.Flush(); err != nil {
			return
		}
	}
}

// session is one client connection's state.
type session struct {
	q     *queue
	c     *twice.FakeConn
	addr  string   // the worker's Redis
	be    *backend // the store, on the world's database; dialed at first need
	multi bool     // inside MULTI … EXEC
}

// handle answers one command; false closes the connection.
func (s *session) handle(cmd redcon.Command, wr *redcon.Writer) bool {
	name := strings.ToUpper(string(cmd.Args[0]))
	switch name {
	case "HELLO":
		if len(cmd.Args) > 1 && string(cmd.Args[1]) != "2" {
			// go-redis v9 asks for RESP3 first and falls back on an error.
			wr.WriteError("NOPROTO the attempt's Redis speaks RESP2")
			return true
		}
	case "QUIT":
		wr.WriteString("OK")
		return false
	case "SELECT":
		wr.WriteString("OK") // the attempt's world is one database
		return true
	case "FLUSHALL":
		cmd.Args = [][]byte{[]byte("FLUSHDB")}
	case "SWAPDB", "MOVE":
		wr.WriteError("ERR the attempt's Redis has one database: " + name + " is not served")
		return true
	case "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "MONITOR", "SYNC", "PSYNC":
		wr.WriteError("ERR the attempt's Redis serves asynq's client and inspector: " + name + " is not served (the check plays asynq's server itself)")
		return true
	case "MULTI":
		s.multi = true
	case "EXEC", "DISCARD":
		s.multi = false
	case "EVAL", "EVALSHA":
		if e, ok := classifyEnqueue(cmd.Args); ok {
			if s.multi {
				wr.WriteError("ERR twiceasynq: an asynq enqueue inside MULTI is not played: enqueue outside a transaction, as asynq's client does")
				return true
			}
			return s.enqueue(cmd, e, wr)
		}
	}
	be, err := s.backend(s.q.runOn(s.addr))
	if err != nil {
		wr.WriteError("ERR " + err.Error())
		return true
	}
	r, err := be.doBytes(cmd.Args)
	if err != nil {
		return false
	}
	wr.WriteRaw(r.Raw)
	return true
}

// errNoAttempt is a command on a worker's Redis while no attempt runs there.
var errNoAttempt = errors.New("twiceasynq: no attempt runs on this worker: a client built on RedisClientOpt(a) was used after its attempt returned")

// backend is the session's connection to the store, on the database of
// the world of the attempt running on the worker (run).
func (s *session) backend(run *attemptRun) (*backend, error) {
	if run == nil {
		return nil, errNoAttempt
	}
	w, err := s.q.worldOf(run.a)
	if err != nil {
		return nil, err
	}
	if s.be == nil {
		if s.be, err = w.s.dial(w.db); err != nil {
			return nil, err
		}
	}
	if err := s.be.selectDB(w.db); err != nil {
		return nil, err
	}
	return s.be, nil
}

// enqueue is asynq's enqueue script, played: the model's answer, and on
// acceptance the script on the store, inside the attempt's effect. The
// script's reply is what asynq maps to its errors: 1 enqueued, 0
// ErrTaskIDConflict, -1 ErrDuplicateTask. An enqueue made, then crashed
// or its reply lost, closes the connection: asynq's client sees no reply.
// One not made (a crash before it) gets an error reply.
func (s *session) enqueue(cmd redcon.Command, e scriptEnqueue, wr *redcon.Writer) bool {
	run := s.q.runOn(s.addr)
	be, err := s.backend(run)
	if err != nil {
		wr.WriteError("ERR " + err.Error())
		return true
	}
	if strings.EqualFold(string(cmd.Args[0]), "EVALSHA") {
		// asynq's client sends EVALSHA, then EVAL on NOSCRIPT: answer it
		// before the model is asked, so an enqueue is one point.
		r, err := be.do("SCRIPT", "EXISTS", string(cmd.Args[1]))
		if err != nil {
			return false
		}
		known := false
		r.ForEach(func(x redcon.RESP) bool { known = x.Int() == 1; return false })
		if !known {
			wr.WriteError("NOSCRIPT No matching script. Please use EVAL.")
			return true
		}
	}
	var stored bool
	var storeErr error
	_, err = s.q.enqueue(s.c.Context(), run.a, s.c.Effect, e.enqueued(), func(context.Context) error {
		stored = true
		storeErr = writeEnqueue(be, cmd, e)
		return storeErr
	})
	switch {
	case err == nil:
		wr.WriteInt(1)
	case errors.Is(err, asynq.ErrTaskIDConflict):
		wr.WriteInt(0)
	case errors.Is(err, asynq.ErrDuplicateTask):
		wr.WriteInt(-1)
	case stored && storeErr == nil:
		return false // enqueued, then the attempt died or its reply was lost: no reply
	default: // nothing was enqueued: a crash before it, the store's refusal, a Group
		wr.WriteError("ERR " + err.Error())
	}
	return true
}

// writeEnqueue runs the enqueue script on the store. The model accepted
// the task; a store that refuses it holds a task the check has worked
// since (the store sees no asynq server): that one is removed first.
func writeEnqueue(be *backend, cmd redcon.Command, e scriptEnqueue) error {
	for try := 0; ; try++ {
		r, err := be.doBytes(cmd.Args)
		if err != nil {
			return fmt.Errorf("twiceasynq: the attempts' Redis: %w", err)
		}
		if r.Type == redcon.Error {
			return fmt.Errorf("twiceasynq: the attempts' Redis refused asynq's enqueue script: %s", r.Data)
		}
		if r.Int() == 1 {
			return nil
		}
		if try > 0 {
			return fmt.Errorf("twiceasynq: internal error: the attempts' Redis refuses the enqueue of %s the check accepted (%d)", e.msg.ID, r.Int())
		}
		prefix := "asynq:{" + e.msg.Queue + "}:"
		for _, c := range [][]string{
			{"DEL", prefix + "t:" + e.msg.ID},
			{"LREM", prefix + "pending", "0", e.msg.ID},
			{"LREM", prefix + "active", "0", e.msg.ID},
			{"ZREM", prefix + "lease", e.msg.ID},
			{"ZREM", prefix + "scheduled", e.msg.ID},
			{"ZREM", prefix + "retry", e.msg.ID},
			{"ZREM", prefix + "archived", e.msg.ID},
			{"ZREM", prefix + "completed", e.msg.ID},
		} {
			if _, err := be.do(c...); err != nil {
				return fmt.Errorf("twiceasynq: the attempts' Redis: %w", err)
			}
		}
		if e.uniqueKey != "" {
			if _, err := be.do("DEL", e.uniqueKey); err != nil {
				return fmt.Errorf("twiceasynq: the attempts' Redis: %w", err)
			}
		}
	}
}

// worldOf is the store's database of the world the attempt a runs in,
// taken on first use.
func (q *queue) worldOf(a *twice.Attempt) (*world, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	st := q.byWorker[a.Pool]
	if st == nil {
		return nil, errors.New("twiceasynq: internal error: the attempt's Redis has no queue state")
	}
	if st.world == nil {
		s, err := sharedStore()
		if err != nil {
			return nil, err
		}
		if st.world, err = s.newWorld(st); err != nil {
			return nil, err
		}
	}
	return st.world, nil
}
