package twice_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/twicekit/twicekit/twice"
)

const keptNoteChildEnv = "TWICE_KEPT_NOTE_CHILD"

// TestKeptNoteChild is the child of TestAKeptDatabaseSaysItDiesWithTheBinary:
// a failing check on the mode TWICE_POSTGRES forces, printing the line it
// logs about its kept database.
func TestKeptNoteChild(t *testing.T) {
	if os.Getenv(keptNoteChildEnv) == "" {
		t.Skip("only as the child of TestAKeptDatabaseSaysItDiesWithTheBinary")
	}
	tb := &fakeTB{name: "TestKeptNote"}
	twice.ExpectIdempotent(tb, loyaltyJob("add 50 points", incrementPoints), twice.Only("sequential"))
	for _, l := range tb.logs {
		if strings.HasPrefix(l, "twice: kept the check's database") {
			fmt.Printf("KEPT %s\n", l)
		}
	}
}

// In local and container mode the server ends with the test binary, and so
// does a kept database: the line that gives its URL says so (issue 43).
func TestAKeptDatabaseSaysItDiesWithTheBinary(t *testing.T) {
	if os.Getenv(keptNoteChildEnv) != "" {
		t.Skip("already the child")
	}
	t.Parallel()
	for mode, what := range map[string]string{
		"local":     "in local mode the cluster is removed when the binary ends",
		"container": "in container mode the container is removed when the binary ends",
	} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode == "container" && os.Getenv("TWICE_POSTGRES_IMAGE") == "" {
				t.Skip("container mode not testable here: TWICE_POSTGRES_IMAGE is not set (go run ./pgfixture/cmd/twice-postgres-image builds one)")
			}
			ctx := context.Background()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKeptNoteChild$", "-test.v")
			cmd.Env = append(os.Environ(), keptNoteChildEnv+"=1", "TWICE_POSTGRES="+mode, "TWICE_DATABASE_URL=")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the child failed: %v\n%s", err, out)
			}
			var line string
			for _, l := range strings.Split(string(out), "\n") {
				if s, ok := strings.CutPrefix(l, "KEPT "); ok {
					line = s
				}
			}
			prefix := "twice: kept the check's database for inspection: postgres://"
			suffix := " (this URL dies with the test binary: " + what + "; " +
				"to look at the database afterwards, run the test again with TWICE_DATABASE_URL set to a server of yours)"
			if !strings.HasPrefix(line, prefix) || !strings.HasSuffix(line, suffix) {
				t.Fatalf("the kept database's line is\n%q\nwant %q…%q; the child said:\n%s", line, prefix, suffix, out)
			}
		})
	}
}
