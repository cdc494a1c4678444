package migration

import (
	"fmt"
	"regexp"
	"strings"
)

// sqlMigrateCommand starts a sql-migrate command line, e.g.
// "-- +migrate Up" (sql-migrate reads it at the start of a line, exactly).
const sqlMigrateCommand = "-- +migrate "

// dbmateUp and dbmateDown match dbmate's block directives, e.g.
// "-- migrate:up transaction:false", as dbmate reads them.
var (
	dbmateUp   = regexp.MustCompile(`(?m)^--\s*migrate:up(\s*$|\s+\S+)`)
	dbmateDown = regexp.MustCompile(`(?m)^--\s*migrate:down(\s*$|\s+\S+)`)
)

// UpSections returns the migrations pgfixture.FS sends for file m: its up section
// alone when m is a sql-migrate or a dbmate migration, m itself otherwise.
// The text sent keeps m's lines (the rest blanked), so that an error's line
// and column are the file's.
func UpSections(m File) ([]File, error) {
	if strings.HasPrefix(m.SQL, sqlMigrateCommand) || strings.Contains(m.SQL, "\n"+sqlMigrateCommand) {
		return sqlMigrateUp(m)
	}
	if dbmateUp.MatchString(m.SQL) || dbmateDown.MatchString(m.SQL) {
		up, err := dbmateUpSection(m)
		return []File{up}, err
	}
	return []File{m}, nil
}

// sqlMigrateUp is the Up section of a sql-migrate migration, as sql-migrate
// parses it: the lines after "-- +migrate Up" until "-- +migrate Down".
// Lines before the first command are not sent. An Up section is sent in one
// round trip (one implicit transaction, as sql-migrate's transaction); with
// "-- +migrate Up notransaction" each statement is sent alone (a statement
// ends at a line ending with a semicolon, or at "-- +migrate
// StatementEnd").
func sqlMigrateUp(m File) ([]File, error) {
	lines := strings.SplitAfter(m.SQL, "\n")
	up := make([]bool, len(lines)) // the line is in the Up section
	var ends []int                 // notransaction: the last line of each statement
	noTx, inUp, inUpSeen, inStatement := false, false, false, false
	for i, line := range lines {
		text := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(text, sqlMigrateCommand) {
			fields := strings.Fields(text[len(sqlMigrateCommand):])
			if len(fields) == 0 {
				return nil, fmt.Errorf("pgfixture: %s:%d: %q is not a sql-migrate command (Up, Down, StatementBegin, StatementEnd)", m.Name, i+1, text)
			}
			switch fields[0] {
			case "Up":
				inUp, inUpSeen = true, true
				for _, o := range fields[1:] {
					noTx = noTx || o == "notransaction"
				}
			case "Down":
				inUp = false
			case "StatementBegin":
				inStatement = true
			case "StatementEnd":
				if inStatement && inUp {
					ends = append(ends, i)
				}
				inStatement = false
			}
			continue
		}
		if !inUp {
			continue
		}
		up[i] = true
		if !inStatement && endsWithSemicolon(text) {
			ends = append(ends, i)
		}
	}
	if inStatement {
		return nil, fmt.Errorf("pgfixture: %s: \"-- +migrate StatementBegin\" with no \"-- +migrate StatementEnd\" after it (sql-migrate refuses the file too)", m.Name)
	}
	if !inUpSeen {
		return nil, nil // a Down section alone: nothing to apply
	}
	keep := func(from, to int) File {
		var b strings.Builder
		for i, line := range lines {
			if i >= from && i <= to && up[i] {
				b.WriteString(line)
			} else if strings.HasSuffix(line, "\n") {
				b.WriteString("\n")
			}
		}
		return File{Name: m.Name, SQL: b.String()}
	}
	if !noTx {
		return []File{keep(0, len(lines)-1)}, nil
	}
	var out []File
	from := 0
	for _, end := range ends {
		out = append(out, keep(from, end))
		from = end + 1
	}
	return out, nil
}

// endsWithSemicolon says whether a sql-migrate line ends a statement: its
// last word before a "--" comment ends with a semicolon.
func endsWithSemicolon(line string) bool {
	prev := ""
	for _, w := range strings.Fields(line) {
		if strings.HasPrefix(w, "--") {
			break
		}
		prev = w
	}
	return strings.HasSuffix(prev, ";")
}

// dbmateUpSection is the up block of a dbmate migration: from "--
// migrate:up" to "-- migrate:down" (or the end), sent in one round trip
// as dbmate sends it (with transaction:false too: dbmate then sends the
// block without BEGIN, which is what one round trip does).
func dbmateUpSection(m File) (File, error) {
	u := dbmateUp.FindStringIndex(m.SQL)
	if u == nil {
		return File{}, fmt.Errorf("pgfixture: %s has \"-- migrate:down\" and no \"-- migrate:up\" block: dbmate requires each migration to define one", m.Name)
	}
	end := len(m.SQL)
	if d := dbmateDown.FindAllStringIndex(m.SQL, -1); d != nil {
		for _, loc := range d {
			if loc[0] > u[0] {
				end = loc[0]
				break
			}
		}
	}
	blank := func(s string) string { return strings.Repeat("\n", strings.Count(s, "\n")) }
	return File{Name: m.Name, SQL: blank(m.SQL[:u[0]]) + m.SQL[u[0]:end] + blank(m.SQL[end:])}, nil
}
