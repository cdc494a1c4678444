package twicegue

import (
	"embed"
	"io/fs"

	"github.com/twicekit/twicekit/pgfixture"
)

//go:embed migrations/schema.sql
var migrations embed.FS

// Migrations is gue's table (gue_jobs and its index), as gue v5.8.0 ships
// it in migrations/schema.sql (gue's Go package does not embed it;
// TestMigrationsAreGues compares the copy with the module's file). Job
// adds it before the job's own schema.
func Migrations() pgfixture.Schema {
	sub, err := fsSub()
	if err != nil {
		return pgfixture.SQL("-- twicegue: " + err.Error() + "\nSELECT 1/0")
	}
	return pgfixture.FS(sub)
}

func fsSub() (fs.FS, error) { return fs.Sub(migrations, "migrations") }
