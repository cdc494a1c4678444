package twice

import (
	"github.com/twicekit/twicekit/internal/serverfacts"
	"github.com/twicekit/twicekit/internal/sessions"
)

// closedPool reports whether err says the pool was closed and the worker's
// pool p is (internal/sessions).
var closedPool = sessions.ClosedPool

// poolClosedByJob returns the check's refusal when an attempt found its
// worker's pool, a.Pool, closed (internal/serverfacts).
func poolClosedByJob(rep *Report) error { return serverfacts.ClosedPoolByJob(attemptFacts(rep)) }
