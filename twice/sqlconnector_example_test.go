package twice_test

import (
	"context"
	"database/sql/driver"
	"fmt"
	"log"

	"github.com/lib/pq"

	"github.com/twicekit/twicekit/twice"
)

// The job's a.DB runs on the application's own lib/pq connector, built as
// the application builds it (here with a notice handler), on the check's
// database.
func ExampleSQLConnector() {
	connector := func(dsn string) (driver.Connector, error) {
		c, err := pq.NewConnector(dsn)
		if err != nil {
			return nil, err
		}
		return pq.ConnectorWithNoticeHandler(c, func(e *pq.Error) { log.Print(e.Message) }), nil
	}
	job := loyaltyJob("ledger, one transaction", ledgerInTransactionSQL)
	rep := twice.Check(context.Background(), job, twice.SQLConnector(connector), twice.WithoutConcurrency("an example"))
	fmt.Println(rep.OK())
	// Output:
	// true
}
