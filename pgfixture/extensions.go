package pgfixture

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/twicekit/twicekit/internal/pgserver"
)

// A migration's CREATE EXTENSION of an extension the server lacks fails
// with PostgreSQL's "could not open extension control file" (15 and
// older) or "extension ... is not available" (16 on).
var (
	extControlFile  = regexp.MustCompile(`extension control file "[^"]*/([^/"]+)\.control"`)
	extNotAvailable = regexp.MustCompile(`extension "([^"]+)" is not available`)
)

// extensionSource says where an extension comes from: its Debian package
// (%d is the server's major version) and an image that has it.
type extensionSource struct {
	debian string // empty: not in Debian's archive
	note   string // what else to know about the package
	image  string
}

// knownExtensions are the extensions applications' migrations most often
// create that PostgreSQL's own packages do not ship.
var knownExtensions = map[string]extensionSource{
	"vector":           {debian: "postgresql-%d-pgvector", note: "in Debian from trixie on, and in the PostgreSQL project's apt repository (apt.postgresql.org) for older releases", image: "pgvector/pgvector:pg%d"},
	"postgis":          {debian: "postgresql-%d-postgis-3", image: "postgis/postgis:%d-3.4"},
	"postgis_raster":   {debian: "postgresql-%d-postgis-3", image: "postgis/postgis:%d-3.4"},
	"postgis_topology": {debian: "postgresql-%d-postgis-3", image: "postgis/postgis:%d-3.4"},
	"pg_cron":          {debian: "postgresql-%d-cron"},
	"pg_partman":       {debian: "postgresql-%d-partman"},
	"pgaudit":          {debian: "postgresql-%d-pgaudit"},
	"hypopg":           {debian: "postgresql-%d-hypopg"},
	"ip4r":             {debian: "postgresql-%d-ip4r"},
	"orafce":           {debian: "postgresql-%d-orafce"},
	"pg_repack":        {debian: "postgresql-%d-repack"},
	"timescaledb":      {note: "from Timescale's own apt repository (timescaledb-2-postgresql-%d)", image: "timescale/timescaledb:latest-pg%d"},
}

// contribExtensions ship with PostgreSQL itself (Debian's postgresql-NN).
var contribExtensions = map[string]bool{
	"citext": true, "hstore": true, "pg_trgm": true, "pgcrypto": true, "uuid-ossp": true, "btree_gist": true,
	"btree_gin": true, "ltree": true, "cube": true, "earthdistance": true, "fuzzystrmatch": true, "intarray": true,
	"isn": true, "tablefunc": true, "unaccent": true, "pg_stat_statements": true, "postgres_fdw": true, "dblink": true,
}

// missingExtension returns the extension err says the server lacks, or "".
func missingExtension(err error) string {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) {
		return ""
	}
	for _, re := range []*regexp.Regexp{extControlFile, extNotAvailable} {
		if m := re.FindStringSubmatch(pgErr.Message); m != nil {
			return m[1]
		}
	}
	return ""
}

// withExtensionHint adds to a migration's error what to install when the
// migration created an extension this server lacks.
func (s *Server) withExtensionHint(err error) error {
	name := missingExtension(err)
	if name == "" {
		return err
	}
	major := s.version / 10000
	src, known := knownExtensions[name]
	if !known && !contribExtensions[name] {
		src = extensionSource{debian: "postgresql-%d-" + strings.ReplaceAll(name, "_", "-"), note: "probably; apt-cache search " + name + " finds it"}
	}
	pkg := func() string {
		if contribExtensions[name] {
			return fmt.Sprintf("it is part of PostgreSQL's own package (postgresql-%d): reinstall that package", major)
		}
		var b strings.Builder
		if src.debian != "" {
			fmt.Fprintf(&b, "install Debian's %s (apt-get install %s)", fmt.Sprintf(src.debian, major), fmt.Sprintf(src.debian, major))
			if src.note != "" {
				fmt.Fprintf(&b, ", %s", src.note)
			}
		} else {
			fmt.Fprintf(&b, "install it %s", fmt.Sprintf(src.note, major))
		}
		return b.String()
	}
	var hint string
	switch s.mode {
	case "local":
		hint = fmt.Sprintf("the local PostgreSQL %d has no extension %q: %s", major, name, pkg())
		if src.image != "" {
			hint += fmt.Sprintf("; or use container mode on an image that has it (TWICE_POSTGRES=container TWICE_POSTGRES_IMAGE=%s)", fmt.Sprintf(src.image, major))
		}
	case "container":
		image := strings.TrimSpace(os.Getenv(pgserver.EnvImage))
		if image == "" {
			image = pgserver.DefaultImage
		}
		hint = fmt.Sprintf("the image %s has no extension %q: set %s to an image that has it", image, name, pgserver.EnvImage)
		if src.image != "" {
			hint += fmt.Sprintf(" (%s), or build one FROM it", fmt.Sprintf(src.image, major))
		}
		if src.debian != "" {
			hint += fmt.Sprintf(" (a Debian-based image: RUN apt-get install -y %s)", fmt.Sprintf(src.debian, major))
		}
	default:
		hint = fmt.Sprintf("the server at %s has no extension %q: install it on that server (%s)", s.scrub.String(s.URL()), name, pkg())
	}
	return fmt.Errorf("%w\n\tpgfixture: %s", err, hint)
}
