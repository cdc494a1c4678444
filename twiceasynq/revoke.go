package twiceasynq

import (
	"errors"
	_ "unsafe" // go:linkname
)

// asynq.RevokeTask came with asynq v0.25.0; twiceasynq supports v0.24.1
// too, so it reads the sentinel without naming it. A variable linked to
// asynq's by name is asynq's own when asynq defines it, and stays nil on
// an asynq that has none (TestRevokeTaskIsAsynqs pins it).
//
//go:linkname revokeTask github.com/hibiken/asynq.RevokeTask
var revokeTask error

// isRevoke reports whether err is asynq.RevokeTask or wraps it: always
// false on an asynq without it.
func isRevoke(err error) bool {
	return revokeTask != nil && errors.Is(err, revokeTask)
}
