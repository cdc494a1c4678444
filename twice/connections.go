package twice

import (
	"github.com/twicekit/twicekit/internal/concurrentplay"
	"github.com/twicekit/twicekit/internal/handles"
)

// concurrentMayRun reports whether the check may play concurrent scenarios:
// they are not switched off and -twice.run does not pick a sequential one.
func (c *config) concurrentMayRun() bool {
	return (c.pairOff(sameJob) == "" || c.pairOff(duplicateJobs) == "") && (c.only == "" || isConcurrentToken(c.only))
}

// concurrentReusesCheckWorker reports whether the first attempt of the
// concurrent scenarios runs on the check's own worker; under another
// isolation level or database/sql driver both get new ones.
func (c *config) concurrentReusesCheckWorker() bool {
	return c.conc.isolation == ReadCommitted && c.sqlOpen == nil
}

// workersNeeded is how many workers a check may make: its own, and one or
// two for the concurrent scenarios (see concurrentWorkers).
func (c *config) workersNeeded() int {
	return concurrentplay.WorkersNeeded(c.concurrentMayRun(), c.concurrentReusesCheckWorker())
}

// connectionsOwner names a check and its workers in the error of a server
// whose connection limit it does not fit (internal/handles).
var connectionsOwner = handles.ConnectionsOwner
