package twiceasynq

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/tidwall/redcon"
	"google.golang.org/protobuf/encoding/protowire"
)

// scriptRecorder is a loopback proxy to Redis that keeps every EVAL and
// EVALSHA a client sent through it, as sent.
type scriptRecorder struct {
	l       net.Listener
	wg      sync.WaitGroup
	mu      sync.Mutex
	scripts [][][]byte
	conns   []net.Conn
}

func newScriptRecorder(t *testing.T, target string) *scriptRecorder {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &scriptRecorder{l: l}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, s)
			r.mu.Unlock()
			r.wg.Add(2)
			go func() { defer r.wg.Done(); _, _ = io.Copy(c, s); c.Close() }()
			go func() {
				defer r.wg.Done()
				defer s.Close()
				rd := redcon.NewReader(c)
				for {
					cmds, err := rd.ReadCommands()
					if err != nil {
						return
					}
					for _, cmd := range cmds {
						if name := string(cmd.Args[0]); name == "evalsha" || name == "eval" || name == "EVALSHA" || name == "EVAL" {
							args := make([][]byte, len(cmd.Args))
							for i, a := range cmd.Args {
								args[i] = append([]byte(nil), a...)
							}
							r.mu.Lock()
							r.scripts = append(r.scripts, args)
							r.mu.Unlock()
						}
						if _, err := s.Write(cmd.Raw); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		r.mu.Lock()
		for _, c := range r.conns {
			c.Close()
		}
		r.mu.Unlock()
		r.wg.Wait()
	})
	return r
}

func (r *scriptRecorder) last() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.scripts) == 0 {
		return nil
	}
	return r.scripts[len(r.scripts)-1]
}

// The enqueue scripts a real asynq.Client sends to a real redis-server
// are read as the enqueue they are: the task message decodes to what the
// options said, and to what Redis stored under the task's key; the
// Unique TTL and the process-at time are read from the script's
// arguments.
func TestEnqueueScriptsOfARealClientAreRead(t *testing.T) {
	t.Parallel()
	ro := startRedis(t)
	rec := newScriptRecorder(t, ro.Addr)
	client := asynq.NewClient(asynq.RedisClientOpt{Addr: rec.l.Addr().String()})
	defer client.Close()
	rc := redis.NewClient(ro)
	defer rc.Close()
	deadline := time.Unix(1893456000, 0) // 2030-01-01
	at := time.Now().Add(time.Hour).Truncate(time.Second)
	for _, c := range []struct {
		name string
		opts []asynq.Option
		want string
	}{
		{"defaults", nil, "queue=default retry=25 timeout=1800 deadline=0 retention=0 unique=0s process=pending group="},
		{"every option of a pending task", []asynq.Option{asynq.TaskID("reward:9812"), asynq.Queue("critical"), asynq.MaxRetry(3),
			asynq.Timeout(time.Minute), asynq.Deadline(deadline), asynq.Retention(time.Hour)},
			"id=reward:9812 queue=critical retry=3 timeout=60 deadline=1893456000 retention=3600 unique=0s process=pending group="},
		{"Unique", []asynq.Option{asynq.Unique(time.Hour)}, "queue=default retry=25 timeout=1800 deadline=0 retention=0 unique=1h0m0s process=pending group="},
		{"ProcessIn", []asynq.Option{asynq.ProcessIn(time.Hour), asynq.MaxRetry(0)}, "queue=default retry=0 timeout=1800 deadline=0 retention=0 unique=0s process=in 1h0m0s group="},
		{"ProcessAt", []asynq.Option{asynq.ProcessAt(at)}, "queue=default retry=25 timeout=1800 deadline=0 retention=0 unique=0s process=in 1h0m0s group="},
		{"ProcessIn and Unique", []asynq.Option{asynq.ProcessIn(time.Hour), asynq.Unique(2 * time.Hour)}, "queue=default retry=25 timeout=1800 deadline=0 retention=0 unique=2h0m0s process=in 1h0m0s group="},
		{"Group", []asynq.Option{asynq.Group("daily")}, "queue=default retry=25 timeout=1800 deadline=0 retention=0 unique=0s process=pending group=daily"},
		{"Group and Unique", []asynq.Option{asynq.Group("daily"), asynq.Unique(time.Minute)}, "queue=default retry=25 timeout=1800 deadline=0 retention=0 unique=1m0s process=pending group=daily"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := rc.FlushAll(t.Context()).Err(); err != nil {
				t.Fatal(err)
			}
			info, err := client.Enqueue(asynq.NewTask(rewardType, payload(9812)), c.opts...)
			if err != nil {
				t.Fatal(err)
			}
			args := rec.last()
			e, ok := classifyEnqueue(args)
			if !ok {
				t.Fatalf("the client's script is not read as an enqueue: %q", args)
			}
			m := e.msg
			if m.ID != info.ID || m.Type != rewardType || string(m.Payload) != string(payload(9812)) {
				t.Errorf("the message is task %q of type %q with payload %q, want %q, %q, %q", m.ID, m.Type, m.Payload, info.ID, rewardType, payload(9812))
			}
			process := "pending"
			if e.processAt != 0 {
				process = fmt.Sprintf("in %s", e.enqueued().set.processIn.Round(time.Minute))
			}
			got := fmt.Sprintf("queue=%s retry=%d timeout=%d deadline=%d retention=%d unique=%s process=%s group=%s",
				m.Queue, m.Retry, m.Timeout, m.Deadline, m.Retention, e.enqueued().set.uniqueTTL, process, m.GroupKey)
			if id := "id=" + m.ID + " "; c.opts != nil && c.name == "every option of a pending task" {
				got = id + got
			}
			if got != c.want {
				t.Errorf("read %s\nwant %s", got, c.want)
			}
			if m.UniqueKey != e.uniqueKey {
				t.Errorf("the unique key is %q in the message, %q in the keys", m.UniqueKey, e.uniqueKey)
			}
			stored, err := rc.HGet(t.Context(), "asynq:{"+m.Queue+"}:t:"+m.ID, "msg").Bytes()
			if err != nil {
				t.Fatal(err)
			}
			sm, err := decodeTaskMessage(stored)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(sm) != fmt.Sprint(m) {
				t.Errorf("Redis stored %+v, the script sent %+v", sm, m)
			}
		})
	}
}

// A script that is not an enqueue is not read as one: the inspector's,
// a script of the app's own, an argument that is no task message.
func TestOtherScriptsAreNotEnqueues(t *testing.T) {
	t.Parallel()
	msg := func(id, queue string) []byte {
		var b []byte
		for _, f := range []struct {
			num protowire.Number
			v   string
		}{{fieldType, rewardType}, {fieldID, id}, {fieldQueue, queue}} {
			b = protowire.AppendTag(b, f.num, protowire.BytesType)
			b = protowire.AppendString(b, f.v)
		}
		return b
	}
	for _, args := range [][][]byte{
		{[]byte("EVAL"), []byte("return 1"), []byte("0")},
		{[]byte("EVALSHA"), []byte("abc"), []byte("2"), []byte("asynq:{default}:t:x"), []byte("asynq:{default}:pending"), []byte("not a message"), []byte("x"), []byte("1")},
		{[]byte("EVALSHA"), []byte("abc"), []byte("2"), []byte("asynq:{default}:t:y"), []byte("asynq:{default}:pending"), msg("x", "default"), []byte("x"), []byte("1")},
		{[]byte("EVALSHA"), []byte("abc"), []byte("2"), []byte("asynq:{critical}:t:x"), []byte("asynq:{critical}:pending"), msg("x", "default"), []byte("x"), []byte("1")},
		{[]byte("EVALSHA"), []byte("abc"), []byte("3"), []byte("asynq:{default}:t:x"), []byte("asynq:{default}:archived"), []byte("asynq:{default}:pending"), []byte("x"), []byte("asynq:{default}:")},
	} {
		if _, ok := classifyEnqueue(args); ok {
			t.Errorf("read as an enqueue: %q", args)
		}
	}
	good := [][]byte{[]byte("EVALSHA"), []byte("abc"), []byte("2"), []byte("asynq:{default}:t:x"), []byte("asynq:{default}:pending"), msg("x", "default"), []byte("x"), []byte("1")}
	if _, ok := classifyEnqueue(good); !ok {
		t.Errorf("an enqueue is not read as one: %q", good)
	}
}
