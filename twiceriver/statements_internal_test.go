package twiceriver

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRiverStatementsAreRiversQueries holds riverStatements against the
// queries of the River driver this module builds with (its source in the
// module cache).
func TestRiverStatementsAreRiversQueries(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/riverqueue/river/riverdriver/riverpgxv5").Output()
	if err != nil {
		t.Skipf("no go command to find River's driver source: %v", err)
	}
	files, err := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "internal", "dbsqlc", "*.sql.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	name := regexp.MustCompile(`-- name: (\w+)`)
	var got []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range name.FindAllStringSubmatch(string(b), -1) {
			got = append(got, m[1])
		}
	}
	slices.Sort(got)
	got = slices.Compact(got)
	var want []string
	for n := range riverStatements {
		want = append(want, n)
	}
	slices.Sort(want)
	require.Equal(t, got, want, "River's driver changed its queries: update riverStatements")
}

// TestAnAppsSqlcQueryKeepsItsLabel: River's labels name River's statements
// only; an app's own sqlc query keeps its label.
func TestAnAppsSqlcQueryKeepsItsLabel(t *testing.T) {
	t.Parallel()
	require.Equal(t, "-- name: BulkCreateMeters :copyfrom", riverLabel("-- name: BulkCreateMeters :copyfrom"))
	require.Equal(t, "River's JobGetByID", riverLabel("-- name: JobGetByID :one"))
	require.Equal(t, "river.JobCompleteTx (the job's completion)", riverLabel("-- name: JobSetStateIfRunningMany :many"))
}
