package migration

import (
	"fmt"
	"regexp"
	"strings"
)

// ternSeparator is the line that splits a tern migration into its up and
// down sections.
const ternSeparator = "---- create above / drop below ----"

// ternTemplate matches tern's template actions, e.g. {{ template "shared/x.sql" . }}.
var ternTemplate = regexp.MustCompile(`\{\{-?\s*(template|install_snapshot)\b`)

// gooseAnnotation matches goose's annotations, e.g. "-- +goose Up".
var gooseAnnotation = regexp.MustCompile(`(?mi)^[ \t]*--[ \t]*\+goose[ \t]+(Up|Down|StatementBegin|StatementEnd|NO TRANSACTION|ENVSUB ON)\b`)

// OtherToolsFiles returns an error naming the right migrator when migs
// (sorted by name) look like another tool's, whose files pgfixture.FS would misapply:
// goose's Down sections, golang-migrate's *.down.sql files, tern's drop
// sections and templates.
func OtherToolsFiles(migs []File) error {
	var up, down string
	for _, m := range migs {
		switch {
		case down == "" && strings.HasSuffix(m.Name, ".down.sql"):
			down = m.Name
		case up == "" && strings.HasSuffix(m.Name, ".up.sql"):
			up = m.Name
		}
	}
	switch {
	case down != "":
		return fmt.Errorf("pgfixture: migrations look like golang-migrate's (%s is a down migration): use golangmigrator.New(fsys) (package github.com/twicekit/twicekit/pgfixture/golangmigrator), which applies only the *.up.sql files, in order", down)
	case up != "":
		return fmt.Errorf("pgfixture: migrations look like golang-migrate's (%s is an up migration): use golangmigrator.New(fsys) (package github.com/twicekit/twicekit/pgfixture/golangmigrator), which applies only the *.up.sql files, in order", up)
	}
	for _, m := range migs {
		if loc := gooseAnnotation.FindStringIndex(m.SQL); loc != nil {
			return fmt.Errorf("pgfixture: migrations look like goose's (%s has %q): use goosemigrator.New(fsys) (package github.com/twicekit/twicekit/pgfixture/goosemigrator), which applies only the Up sections",
				m.Name, strings.TrimSpace(m.SQL[loc[0]:loc[1]]))
		}
	}
	for _, m := range migs {
		if strings.Contains(m.SQL, ternSeparator) {
			return fmt.Errorf("pgfixture: migrations look like tern's (%s has %q, and FS would run its drop section): use ternmigrator.New(fsys) (module github.com/twicekit/twicekit/pgfixture/ternmigrator), which applies only the create sections, through tern",
				m.Name, ternSeparator)
		}
		if loc := ternTemplate.FindStringIndex(m.SQL); loc != nil {
			return fmt.Errorf("pgfixture: migrations look like tern's (%s has the template action %q, which FS would send as SQL): use ternmigrator.New(fsys) (module github.com/twicekit/twicekit/pgfixture/ternmigrator), which evaluates tern's templates",
				m.Name, strings.TrimSpace(m.SQL[loc[0]:loc[1]]))
		}
	}
	return nil
}
