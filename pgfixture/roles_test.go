package pgfixture

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/internal/migration"
)

// A migration's CREATE ROLE does not break the next template build on the
// same server: a role the server has when a build starts is not created
// again, and the grants to it still apply. Created twice within one build
// it fails, as in production, and the error says what to write.
func TestMigrationsRolesSurviveASecondTemplate(t *testing.T) {
	t.Parallel()
	ctx := ctxT(t)
	role := "twicekit_test_reader"
	create := `CREATE ROLE twicekit_test_reader NOLOGIN; -- the application's read-only role
`
	a := New(t, SQL(create+`CREATE TABLE a (id int); GRANT SELECT ON a TO `+role+`;`))
	b := New(t, SQL(create+`CREATE TABLE b (id int); GRANT SELECT ON b TO `+role+`;`))
	for _, c := range []struct {
		db    *DB
		table string
	}{{a, "a"}, {b, "b"}} {
		var ok bool
		require.NoError(t, c.db.Pool().QueryRow(ctx, `SELECT has_table_privilege($1, $2, 'SELECT')`, role, c.table).Scan(&ok))
		assert.True(t, ok, c.table)
	}

	dup := "twicekit_test_dup_" + randHex(4)
	_, err := sharedT(t).CreateDB(ctx, SQL("CREATE ROLE "+dup+";\nCREATE ROLE "+dup+";"))
	require.ErrorContains(t, err, `role "`+dup+`" already exists`)
	require.ErrorContains(t, err, "DO $$ BEGIN CREATE ROLE … ; EXCEPTION WHEN duplicate_object THEN NULL; END $$;")

	// Another migrator runs the migration as it is: its error says what to
	// write instead.
	_, err = sharedT(t).CreateDB(ctx, Migrations(roleMigrator{}))
	require.ErrorContains(t, err, `role "twicekit_test_reader" already exists`)
	require.ErrorContains(t, err, "roles belong to the whole server")
}

// roleMigrator creates twicekit_test_reader as it is.
type roleMigrator struct{}

func (roleMigrator) Hash() string { return "role migrator" }
func (roleMigrator) Migrate(ctx context.Context, url string) error {
	db, err := migration.OpenSQL(url)
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, "CREATE ROLE twicekit_test_reader NOLOGIN")
	return err
}

// Only top-level statements creating an existing role are blanked, lines
// and columns kept; a CREATE ROLE in a function body, a string or a
// comment, and CREATE USER MAPPING, stay.
func TestSkipExistingRoles(t *testing.T) {
	roles := map[string]bool{"reader": true, "Mixed": true, "mapping": true}
	sql := "CREATE ROLE reader LOGIN PASSWORD 'a;b';\n" +
		"/* CREATE ROLE reader; */ create user \"Mixed\";\n" +
		"CREATE ROLE writer;\n" +
		"DO $x$ BEGIN CREATE ROLE reader; END $x$;\n" +
		"SELECT 'CREATE ROLE reader;';\n" +
		"CREATE USER MAPPING FOR reader SERVER s;\n" +
		"CREATE GROUP READER"
	got, skipped := skipExistingRoles(sql, roles)
	assert.Equal(t, []string{"reader", "Mixed", "reader"}, skipped)
	assert.Equal(t, "                                       ;\n"+
		"/* CREATE ROLE reader; */                    ;\n"+
		"CREATE ROLE writer;\n"+
		"DO $x$ BEGIN CREATE ROLE reader; END $x$;\n"+
		"SELECT 'CREATE ROLE reader;';\n"+
		"CREATE USER MAPPING FOR reader SERVER s;\n"+
		"                   ", got)
}
