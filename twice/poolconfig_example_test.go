package twice_test

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/twicekit/twicekit/twice"
)

// The application registers a composite type in its pool's AfterConnect;
// the check is given the same configuration, so a.Pool can encode it.
func ExampleConfigurePool() {
	job := twice.Job{Name: "write invoice", Schema: invoiceSchema, Run: writeInvoice}
	rep := twice.Check(context.Background(), job,
		twice.ConfigurePool(func(cfg *pgxpool.Config) { cfg.AfterConnect = registerAmount }),
		twice.WithoutConcurrency("one statement"))
	fmt.Println(rep)
	// Output:
	// twice: write invoice: idempotent in 4 scenarios (sequential, crash@1, crash@end, duplicate-enqueue)
	// concurrent deliveries not checked: one statement
}
