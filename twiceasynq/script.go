package twiceasynq

import (
	"strconv"
	"strings"
	"time"
)

// asynq's client enqueues with one of six Lua scripts (internal/rdb in
// asynq v0.24 to v0.26), told apart here by their keys and arguments, not
// by their source or SHA, so that a release that keeps their shapes is
// read too:
//
//	enqueue           KEYS t:<id> pending               ARGV msg id now
//	enqueueUnique     KEYS unique t:<id> pending        ARGV id ttl msg now
//	schedule          KEYS t:<id> scheduled             ARGV msg processAt id
//	scheduleUnique    KEYS unique t:<id> scheduled      ARGV id ttl processAt msg
//	addToGroup        KEYS t:<id> g:<group> groups      ARGV msg id now group
//	addToGroupUnique  KEYS t:<id> g:<group> groups unique ARGV msg id now group ttl
//
// each key in the task's queue, asynq:{<queue>}:…, and msg the task's
// TaskMessage (message.go), whose ID and queue are the keys'.

// scriptEnqueue is one enqueue script, read.
type scriptEnqueue struct {
	msg       taskMessage
	uniqueKey string
	uniqueTTL time.Duration
	processAt int64 // Unix seconds; 0: pending
}

// classifyEnqueue reads the EVAL or EVALSHA args as an asynq enqueue, or
// says it is none.
func classifyEnqueue(args [][]byte) (scriptEnqueue, bool) {
	if len(args) < 3 {
		return scriptEnqueue{}, false
	}
	n, err := strconv.Atoi(string(args[2]))
	if err != nil || n < 0 || 3+n > len(args) {
		return scriptEnqueue{}, false
	}
	keys, argv := strs(args[3:3+n]), args[3+n:]
	type shape struct {
		keys                  []string // the keys' suffixes after asynq:{q}:, "t:" for the task key, "unique:" for the lock
		msg, id, ttl, process int      // ARGV indexes (-1: none)
		argc                  int
	}
	shapes := []shape{
		{[]string{"t:", "pending"}, 0, 1, -1, -1, 3},
		{[]string{"unique:", "t:", "pending"}, 2, 0, 1, -1, 4},
		{[]string{"t:", "scheduled"}, 0, 2, -1, 1, 3},
		{[]string{"unique:", "t:", "scheduled"}, 3, 0, 1, 2, 4},
		{[]string{"t:", "g:", "groups"}, 0, 1, -1, -1, 4},
		{[]string{"t:", "g:", "groups", "unique:"}, 0, 1, 4, -1, 5},
	}
	for _, s := range shapes {
		if len(keys) != len(s.keys) || len(argv) != s.argc {
			continue
		}
		msg, err := decodeTaskMessage(argv[s.msg])
		if err != nil || string(argv[s.id]) != msg.ID {
			continue
		}
		prefix := "asynq:{" + msg.Queue + "}:"
		e := scriptEnqueue{msg: msg}
		ok := true
		for i, want := range s.keys {
			rest, in := strings.CutPrefix(keys[i], prefix)
			switch {
			case !in:
				ok = false
			case want == "t:":
				ok = ok && rest == "t:"+msg.ID
			case want == "unique:":
				ok = ok && strings.HasPrefix(rest, "unique:")
				e.uniqueKey = keys[i]
			case want == "g:":
				ok = ok && rest == "g:"+msg.GroupKey
			default:
				ok = ok && rest == want
			}
		}
		if !ok {
			continue
		}
		if s.ttl >= 0 {
			ttl, err := strconv.ParseInt(string(argv[s.ttl]), 10, 64)
			if err != nil {
				continue
			}
			e.uniqueTTL = time.Duration(ttl) * time.Second
		}
		if s.process >= 0 {
			at, err := strconv.ParseInt(string(argv[s.process]), 10, 64)
			if err != nil {
				continue
			}
			e.processAt = at
		}
		return e, true
	}
	return scriptEnqueue{}, false
}

func strs(b [][]byte) []string {
	out := make([]string, len(b))
	for i, x := range b {
		out[i] = string(x)
	}
	return out
}

// enqueued is the script's enqueue as the model takes it. A scheduled
// task's delay is counted on the wall clock asynq's client set its
// process-at time by, in whole seconds as asynq stores it.
func (e scriptEnqueue) enqueued() enqueued {
	m := e.msg
	set := settings{maxRetry: max(m.Retry, 0), queue: m.Queue, taskID: m.ID, uniqueTTL: e.uniqueTTL,
		timeout: time.Duration(m.Timeout) * time.Second, retention: time.Duration(m.Retention) * time.Second, group: m.GroupKey}
	if m.Deadline != 0 {
		set.deadline = time.Unix(m.Deadline, 0)
	}
	if e.processAt != 0 {
		set.processIn = max(time.Unix(e.processAt, 0).Sub(time.Unix(time.Now().Unix(), 0)), 0)
		if set.uniqueTTL > 0 {
			// asynq's client counts a scheduled task's lock from the
			// enqueue (process-at + TTL − now, its seconds cut), the
			// model from when the task is due.
			set.uniqueTTL = max(set.uniqueTTL+time.Second-set.processIn, time.Second)
		}
	}
	return enqueued{typ: m.Type, payload: m.Payload, headers: m.Headers, set: set}
}
