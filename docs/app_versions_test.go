package docs_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// appMain is an application that uses its own testcontainers-go and asynq,
// and twice, pgfixture and twiceasynq beside them.
const appMain = `package app

import (
	"github.com/hibiken/asynq"
	"github.com/testcontainers/testcontainers-go"

	"github.com/twicekit/twicekit/pgfixture"
	"github.com/twicekit/twicekit/twice"
	"github.com/twicekit/twicekit/twiceasynq"
)

var (
	_ testcontainers.ContainerRequest
	_ = asynq.NewTask
	_ twice.Job
	_ twiceasynq.Job
	_ pgfixture.Schema
)
`

// appTest runs a query on pgfixture's PostgreSQL, in the mode the
// environment names (container mode in TestContainerModeOnTestcontainers038).
const appTest = `package app

import (
	"context"
	"os"
	"testing"

	"github.com/twicekit/twicekit/pgfixture"
)

func TestMain(m *testing.M) { os.Exit(pgfixture.Main(m)) }

func TestQuery(t *testing.T) {
	db := pgfixture.New(t, pgfixture.SQL("CREATE TABLE t (id int)"))
	var n int
	if err := db.Pool().QueryRow(context.Background(), "SELECT count(*) FROM t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	srv, err := pgfixture.Shared(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("mode %s: %d rows", srv.Mode(), n)
}
`

// writeApp writes an application module requiring the given versions of
// testcontainers-go and asynq, with twicekit's modules replaced by this
// checkout, and runs go mod tidy in it. It returns the module's directory
// and its go.mod after tidy.
func writeApp(t *testing.T, testcontainers, asynq string) (string, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: this test reads the module proxy")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	checkout, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := `module example.com/app

go 1.25.0

require (
	github.com/hibiken/asynq ` + asynq + `
	github.com/testcontainers/testcontainers-go ` + testcontainers + `
	github.com/twicekit/twicekit v0.0.0
	github.com/twicekit/twicekit/twiceasynq v0.0.0
)

replace github.com/twicekit/twicekit => ` + checkout + `

replace github.com/twicekit/twicekit/twiceasynq => ` + filepath.Join(checkout, "twiceasynq") + `
`
	for name, text := range map[string]string{"go.mod": mod, "app.go": appMain, "app_test.go": appTest} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd(t, dir, nil, "mod", "tidy")
	b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	return dir, string(b)
}

// goCmd runs the go command in dir, outside the workspace, and fails the
// test with its output when it fails.
func goCmd(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s in the application module: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// requires fails the test unless modfile requires module at version.
func requires(t *testing.T, modfile, module, version string) {
	t.Helper()
	for _, line := range strings.Split(modfile, "\n") {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "require "))
		if len(f) >= 2 && f[0] == module {
			if f[1] != version {
				t.Errorf("adding twicekit raised %s from %s to %s:\n%s", module, version, f[1], modfile)
			}
			return
		}
	}
	t.Errorf("the application's go.mod no longer requires %s:\n%s", module, modfile)
}

// An application that has testcontainers-go v0.40.0 and asynq v0.24.1
// adds twice and twiceasynq with go mod tidy, keeps both versions, and
// builds.
func TestAppKeepsItsTestcontainersAndAsynq(t *testing.T) {
	dir, modfile := writeApp(t, "v0.40.0", "v0.24.1")
	requires(t, modfile, "github.com/testcontainers/testcontainers-go", "v0.40.0")
	requires(t, modfile, "github.com/hibiken/asynq", "v0.24.1")
	goCmd(t, dir, nil, "build", "./...")
	goCmd(t, dir, nil, "vet", "./...")
}

// Container mode works on testcontainers-go v0.38.0, the oldest release
// twicekit supports, in an application that requires it: the
// application's test starts PostgreSQL in a container.
func TestContainerModeOnTestcontainers038(t *testing.T) {
	image := os.Getenv("TWICE_POSTGRES_IMAGE")
	if image == "" {
		t.Skip("TWICE_POSTGRES_IMAGE is not set: no image to run (.ci/run builds one where Docker answers)")
	}
	if err := exec.Command("docker", "image", "inspect", image).Run(); err != nil {
		t.Skipf("Docker does not answer, or has no image %s: %v", image, err)
	}
	dir, modfile := writeApp(t, "v0.38.0", "v0.24.1")
	requires(t, modfile, "github.com/testcontainers/testcontainers-go", "v0.38.0")
	out := goCmd(t, dir, []string{"TWICE_POSTGRES=container"}, "test", "-count=1", "-v", "./...")
	if !strings.Contains(out, "mode container: 0 rows") {
		t.Fatalf("the application's test did not run in container mode:\n%s", out)
	}
}
