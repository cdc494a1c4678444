package twice_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// integrations are the module paths that stay out of the root module: each
// integration (River, asynq, gue, Temporal, stripe-go, goose,
// golang-migrate, go-redis) is required by a module of its own, so that
// minimal version selection never raises them for a user of package twice.
var integrations = []string{
	"github.com/riverqueue/",
	"github.com/hibiken/asynq",
	"github.com/vgarvardt/gue",
	"go.temporal.io/",
	"github.com/stripe/stripe-go",
	"github.com/pressly/goose",
	"github.com/golang-migrate/migrate",
	"github.com/redis/go-redis",
	"github.com/twicekit/twicekit/twiceriver",
	"github.com/twicekit/twicekit/twiceasynq",
	"github.com/twicekit/twicekit/twicegue",
	"github.com/twicekit/twicekit/twicetemporal",
	"github.com/twicekit/twicekit/pgfixture/goosemigrator",
	"github.com/twicekit/twicekit/pgfixture/golangmigrator",
	"github.com/twicekit/twicekit/examples",
}

func integration(path string) string {
	for _, p := range integrations {
		if strings.HasPrefix(path, p) {
			return p
		}
	}
	return ""
}

// The root go.mod requires none of the integrations, and the root's
// packages (twice, pgfixture and the others a user imports) depend on none
// of them.
func TestTheIntegrationsStayOutOfTheRootModule(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	cmd := exec.Command("go", "mod", "edit", "-json", "../go.mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json ../go.mod: %v", err)
	}
	var mod struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	if len(mod.Require) == 0 {
		t.Fatalf("go mod edit -json ../go.mod lists no requirement:\n%s", out)
	}
	for _, r := range mod.Require {
		if p := integration(r.Path); p != "" {
			t.Errorf("the root go.mod requires %s %s: keep %s in its integration's module", r.Path, r.Version, p)
		}
	}

	// GOWORK=off: the root module as a user's build sees it, without the
	// repository's workspace.
	cmd = exec.Command("go", "list", "-deps", "./twice", "./pgfixture", "./effects/...", "./faults/...", "./concurrent/...", "./generators/...")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	pkgs := strings.Fields(string(out))
	if len(pkgs) < 10 {
		t.Fatalf("go list -deps named %d packages, expected the root's and their dependencies:\n%s", len(pkgs), out)
	}
	for _, p := range pkgs {
		if i := integration(p); i != "" {
			t.Errorf("a root package depends on %s (%s)", p, i)
		}
	}
}
