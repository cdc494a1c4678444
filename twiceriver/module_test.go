package twiceriver_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// riverModule is the module whose oldest supported release go.mod requires.
const riverModule = "github.com/riverqueue/river"

// requirement is the version of module that the modfile requires.
func requirement(t *testing.T, modfile, module string) string {
	t.Helper()
	out, err := exec.Command("go", "mod", "edit", "-json", modfile).Output()
	if err != nil {
		t.Fatalf("go mod edit -json %s: %v", modfile, err)
	}
	var mod struct {
		Require []struct{ Path, Version string }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	for _, r := range mod.Require {
		if r.Path == module {
			return r.Version
		}
	}
	t.Fatalf("%s requires no %s", modfile, module)
	return ""
}

// An app module on River's oldest supported release (the one this module's
// go.mod requires; go.newest.mod has the newest tested) adds twiceriver:
// go mod tidy keeps the app's River where it was, and the app builds.
func TestAnAppOnTheOldestRiverKeepsItsRiver(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs go mod tidy and go build in a scratch module")
	}
	oldest := requirement(t, "go.mod", riverModule)
	if newest := requirement(t, "go.newest.mod", riverModule); newest == oldest {
		t.Logf("River's oldest and newest supported releases are both %s", oldest)
	}
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	app := t.TempDir()
	gomod := strings.Join([]string{
		"module example.com/app",
		"",
		"go 1.26.0",
		"",
		"require (",
		"\t" + riverModule + " " + oldest,
		"\t" + riverModule + "/riverdriver/riverpgxv5 " + oldest,
		"\tgithub.com/twicekit/twicekit/twiceriver v0.0.0",
		")",
		"",
		"replace github.com/twicekit/twicekit => " + filepath.Dir(here),
		"",
		"replace github.com/twicekit/twicekit/twiceriver => " + here,
		"",
	}, "\n")
	main := `package main

import (
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"

	"github.com/twicekit/twicekit/twiceriver"
)

type noop struct{}

func (noop) Kind() string { return "noop" }

func main() {
	_ = river.Config{}
	_ = riverpgxv5.New(nil)
	_ = twiceriver.Job[noop]{}
}
`
	// The checksums the app needs are the root's and this module's.
	var sums []byte
	for _, f := range []string{"../go.sum", "go.sum"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, b...)
	}
	for name, body := range map[string][]byte{"go.mod": []byte(gomod), "main.go": []byte(main), "go.sum": sums} {
		if err := os.WriteFile(filepath.Join(app, name), body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = app
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in the app module: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("mod", "tidy")
	if got := run("list", "-m", "-f", "{{.Version}}", riverModule); got != oldest {
		gm, _ := os.ReadFile(filepath.Join(app, "go.mod"))
		t.Fatalf("adding twiceriver raised the app's River from %s to %s; go.mod after go mod tidy:\n%s", oldest, got, gm)
	}
	run("build", "./...")
}
