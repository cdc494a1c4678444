package faults

import (
	"database/sql/driver"

	"github.com/twicekit/twicekit/internal/inject"
)

// WrapConnector wraps c, a connector of any database/sql driver (lib/pq, or
// anything registered with database/sql), for a handle the job opens itself:
// every Exec, Query, Prepare, prepared-statement execution, Begin, Commit and
// Rollback sent through it is a point of the attempt found in the call's
// context. After a crash its calls are refused with [ErrCrashed] before they
// reach the driver, and the connection a refused call was made on is closed,
// so PostgreSQL aborts its open transaction (database/sql rolls back a
// transaction whose context the crash cancelled, and that rollback is such a
// call). A refused call never returns driver.ErrBadConn, so database/sql
// cannot silently retry it.
//
// Calls whose context belongs to no attempt are refused with
// [ErrForeignContext]: wrap connectors in tests, not in production code.
// (The handles a check gives a job are wrapped already.)
func WrapConnector(c driver.Connector) driver.Connector {
	return inject.WrapConnector(c, nil, nil)
}

// OpenConnector returns a connector for the database/sql driver registered
// under driverName (as sql.Open would use it) and dsn: the driver's own
// connector when it implements driver.DriverContext, otherwise one that calls
// its Open(dsn). Wrap it with [WrapConnector] and open it with sql.OpenDB.
func OpenConnector(driverName, dsn string) (driver.Connector, error) {
	return inject.OpenConnector(driverName, dsn)
}
