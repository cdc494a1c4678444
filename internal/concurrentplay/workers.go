package concurrentplay

import (
	"strings"

	"github.com/twicekit/twicekit/concurrent"
)

// WorkerParams are the runtime parameters of the sessions of attempt i's
// new worker, from the check's (params, left as they are): its name
// (application_name), so the scheduler finds its sessions even when the
// driver does not report backend PIDs, and its isolation level unless it
// is READ COMMITTED (isolation "").
func WorkerParams(params map[string]string, i int, isolation string) (name string, out map[string]string) {
	out = map[string]string{}
	for key, v := range params {
		out[key] = v
	}
	name = "twice-attempt-" + concurrent.Letter(i)
	out["application_name"] = name
	if isolation != "" {
		out["default_transaction_isolation"] = strings.ToLower(isolation)
	}
	return name, out
}
