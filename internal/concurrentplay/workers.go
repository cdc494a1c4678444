package concurrentplay

import (
	"fmt"
	"strings"

	"github.com/twicekit/twicekit/concurrent"
)

// Workers makes the two workers of the concurrent scenarios, of type W:
// the check's own (own) as the first when reuse says so, else a new one,
// and a new second one. New ones get the runtime parameters of the check's
// sessions (params, left as they are) with a name (application_name), so
// the scheduler finds their sessions even when the driver does not report
// backend PIDs, and their isolation level unless it is READ COMMITTED
// (Isolation; isolation 0). It returns the workers and their sessions' names ("":
// the check's worker).
func Workers[W any](own W, reuse bool, params map[string]string, isolation int, make func(params map[string]string) (W, error)) ([2]W, [2]string, error) {
	var workers [2]W
	var names [2]string
	for i := range workers {
		if i == 0 && reuse {
			workers[i] = own
			continue
		}
		p := map[string]string{}
		for key, v := range params {
			p[key] = v
		}
		names[i] = "twice-attempt-" + concurrent.Letter(i)
		p["application_name"] = names[i]
		if isolation != 0 {
			p["default_transaction_isolation"] = strings.ToLower(Isolation(isolation))
		}
		w, err := make(p)
		if err != nil {
			return workers, names, err
		}
		workers[i] = w
	}
	return workers, names, nil
}

// Isolation names the isolation level l (twice's IsolationLevel: 0 READ
// COMMITTED, PostgreSQL's default, 1 REPEATABLE READ, 2 SERIALIZABLE) as
// PostgreSQL does.
func Isolation(l int) string {
	switch l {
	case 0:
		return "READ COMMITTED"
	case 1:
		return "REPEATABLE READ"
	case 2:
		return "SERIALIZABLE"
	}
	return fmt.Sprintf("isolation(%d)", l)
}

// WorkersNeeded is how many workers a check may make: its own, and one or
// two for the concurrent scenarios (none when they may not run, one when
// the first attempt reuses the check's own worker; see Workers).
func WorkersNeeded(mayRun, reuse bool) int {
	switch {
	case !mayRun:
		return 1
	case reuse:
		return 2
	default:
		return 3
	}
}
