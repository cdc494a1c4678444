package twice

import "fmt"

// SQLDriver makes Attempt.DB a *sql.DB on the database/sql driver registered
// under name (for example "postgres" from github.com/lib/pq) instead of pgx's,
// wrapped so that its statements are points of the attempt as pgx's are.
func SQLDriver(name string) Option {
	return optionFunc(func(c *config) { c.sqlDriver = name })
}

// useSQLDriver replaces the worker's *sql.DB with one on the named driver.
func (c *checker) useSQLDriver(name string) error {
	return fmt.Errorf("twice: SQLDriver(%q): not built yet", name)
}
