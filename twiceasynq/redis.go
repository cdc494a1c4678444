package twiceasynq

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hibiken/asynq"
	"github.com/tidwall/redcon"

	"github.com/twicekit/twicekit/twice"
)

// The attempt's Redis: RedisClientOpt(a) is the address of a Redis the
// check owns for the attempt a. An application builds its real
// *asynq.Client (or asynq.Inspector) on it. Every command goes to the
// store (store.go), on the database of the attempt's world, except asynq's
// enqueue scripts: those are the enqueue NewClient(a) makes (enqueue in
// followups.go), a point and an effect of the attempt, refused as asynq
// refuses it, and on acceptance written to the store too.

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
// The Redis listens on a loopback port of its own for the attempt, and
// closes when the attempt returns. Given an attempt twiceasynq is not
// running, the options name a network that makes every command fail with
// what to do.
func RedisClientOpt(a *twice.Attempt) asynq.RedisClientOpt {
	v, ok := attemptQueues.Load(a)
	if !ok {
		return asynq.RedisClientOpt{Network: notAttemptsRedis, Addr: "twiceasynq.invalid:0"}
	}
	addr, err := v.(*attemptRun).redisAddr()
	if err != nil {
		return asynq.RedisClientOpt{Network: "twiceasynq: " + err.Error(), Addr: "twiceasynq.invalid:0"}
	}
	// A concurrent scenario holds an attempt at its points while the other
	// runs: longer than go-redis's 3 s read timeout, under load.
	return asynq.RedisClientOpt{Addr: addr, ReadTimeout: time.Minute, WriteTimeout: time.Minute}
}

const notAttemptsRedis = "twiceasynq.RedisClientOpt got an attempt twiceasynq is not running: call it in Job.Handler or Job.Mux with the attempt they get"

// attemptRun is one attempt twiceasynq runs, while its handler is built
// and runs: NewClient and RedisClientOpt find it in attemptQueues.
type attemptRun struct {
	q   *queue
	a   *twice.Attempt
	ctx context.Context // the attempt's: the enqueues through its Redis are its points

	mu     sync.Mutex
	front  *redisFront
	closed bool
}

// running runs f with the attempt a registered, and closes its Redis
// when f returns.
func (q *queue) running(ctx context.Context, a *twice.Attempt, f func() error) error {
	r := &attemptRun{q: q, a: a, ctx: ctx}
	attemptQueues.Store(a, r)
	defer func() {
		attemptQueues.Delete(a)
		r.close()
	}()
	return f()
}

// redisAddr starts the attempt's Redis on first use and returns its
// address.
func (r *attemptRun) redisAddr() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return "", errors.New("the attempt returned: its Redis is closed")
	}
	if r.front == nil {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("listening for the attempt's Redis: %w", err)
		}
		r.front = &redisFront{run: r, l: l, conns: map[net.Conn]bool{}}
		r.front.wg.Add(1)
		go r.front.accept()
	}
	return r.front.l.Addr().String(), nil
}

func (r *attemptRun) close() {
	r.mu.Lock()
	r.closed = true
	f := r.front
	r.mu.Unlock()
	if f != nil {
		f.close()
	}
}

// redisFront serves the attempt's Redis: RESP read and written with
// redcon, each connection with a connection to the store behind it.
type redisFront struct {
	run *attemptRun
	l   net.Listener
	wg  sync.WaitGroup

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

func (f *redisFront) accept() {
	defer f.wg.Done()
	for {
		c, err := f.l.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		if f.closed {
			f.mu.Unlock()
			c.Close()
			return
		}
		f.conns[c] = true
		f.wg.Add(1)
		f.mu.Unlock()
		go func() {
			defer f.wg.Done()
			defer func() {
				c.Close()
				f.mu.Lock()
				delete(f.conns, c)
				f.mu.Unlock()
			}()
			f.serve(c)
		}()
	}
}

// close stops the listener and every connection, and waits for them.
func (f *redisFront) close() {
	f.mu.Lock()
	f.closed = true
	f.l.Close()
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}

// session is one client connection's state.
type session struct {
	f     *redisFront
	be    *backend // the store, on the world's database; dialed at first need
	multi bool     // inside MULTI … EXEC
}

func (f *redisFront) serve(c net.Conn) {
	s := &session{f: f}
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
	be, err := s.backend()
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

// backend is the session's connection to the store, on its world's
// database.
func (s *session) backend() (*backend, error) {
	w, err := s.f.run.q.worldOf(s.f.run.a)
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
// ErrTaskIDConflict, -1 ErrDuplicateTask. A crash, or a reply the check
// loses, closes the connection: asynq's client sees no reply.
func (s *session) enqueue(cmd redcon.Command, e scriptEnqueue, wr *redcon.Writer) bool {
	be, err := s.backend()
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
	var storeErr error
	run := s.f.run
	_, err = run.q.enqueue(run.ctx, run.a, e.enqueued(), func(context.Context) error {
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
	case storeErr != nil, errors.Is(err, errAggregation):
		wr.WriteError("ERR " + err.Error())
	default:
		return false // crashed, or the reply was lost
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
