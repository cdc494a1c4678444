package twice

import "github.com/twicekit/twicekit/internal/serverfacts"

// When the context the caller passes to Check ends, the check says so,
// whatever failed after it, and keeps no database (internal/serverfacts).
var (
	callerEnded   = serverfacts.CallerEnded
	isCallerEnded = serverfacts.IsCallerEnded
)
