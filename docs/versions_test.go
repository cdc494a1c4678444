package docs_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// adapters are the modules with a go.newest.mod: their library, and the
// file holding their package comment.
var adapters = []struct{ dir, library, name, doc string }{
	{"twiceriver", "github.com/riverqueue/river", "River", "doc.go"},
	{"twiceasynq", "github.com/hibiken/asynq", "asynq", "doc.go"},
	{"twicegue", "github.com/vgarvardt/gue/v5", "gue", "doc.go"},
	{"twicewatermill", "github.com/ThreeDotsLabs/watermill", "watermill", "doc.go"},
	{"twicetemporal", "go.temporal.io/sdk", "Temporal SDK", "doc.go"},
	{"pgfixture/goosemigrator", "github.com/pressly/goose/v3", "goose", "goosemigrator.go"},
	{"pgfixture/golangmigrator", "github.com/golang-migrate/migrate/v4", "golang-migrate", "golangmigrator.go"},
	{"pgfixture/ternmigrator", "github.com/jackc/tern/v2", "tern", "ternmigrator.go"},
}

// required is the version of module that a modfile (relative to the root)
// requires.
func required(t *testing.T, modfile, module string) string {
	t.Helper()
	re := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(module) + `\s+(v\S+)`)
	m := re.FindStringSubmatch(read(t, modfile))
	if m == nil {
		t.Fatalf("%s requires no %s", modfile, module)
	}
	return m[1]
}

// Each adapter's package comment and the README's packages table state the
// versions of its library that its go.mod (the oldest) and go.newest.mod
// (the newest) require; every go.newest.mod is in this list.
func TestAdaptersStateTheVersionsTheirModfilesRequire(t *testing.T) {
	found, err := filepath.Glob(filepath.Join(root, "*", "go.newest.mod"))
	if err != nil {
		t.Fatal(err)
	}
	nested, _ := filepath.Glob(filepath.Join(root, "*", "*", "go.newest.mod"))
	found = append(found, nested...)
	known := map[string]bool{}
	for _, a := range adapters {
		known[a.dir] = true
	}
	for _, f := range found {
		rel, _ := filepath.Rel(root, filepath.Dir(f))
		if !known[filepath.ToSlash(rel)] {
			t.Errorf("%s has a go.newest.mod but is not in this test's adapters", rel)
		}
	}
	readme := read(t, "README.md")
	for _, a := range adapters {
		oldest := required(t, a.dir+"/go.mod", a.library)
		newest := required(t, a.dir+"/go.newest.mod", a.library)
		stated := a.name + " " + oldest + " to " + newest
		if oldest == newest {
			stated = a.name + " " + oldest
		}
		doc := read(t, a.dir+"/"+a.doc)
		if !strings.Contains(strings.Join(strings.Fields(strings.ReplaceAll(doc, "//", "")), " "), "Versions: "+stated) {
			t.Errorf("%s/%s: its package comment must say \"Versions: %s\" (its go.mod and go.newest.mod)", a.dir, a.doc, stated)
		}
		if !strings.Contains(readme, "("+stated+")") {
			t.Errorf("README.md: the packages table must say (%s) for %s", stated, a.dir)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "go.work")); err != nil {
		t.Errorf("no go.work at the root: the README's commands need it: %v", err)
	}
}

// The README states the testcontainers-go range of container mode: the
// root's go.mod (the oldest) and go.newest.mod (the newest, which CI's
// section 6b runs container mode on).
func TestReadmeStatesTheTestcontainersRange(t *testing.T) {
	const tc = "github.com/testcontainers/testcontainers-go"
	oldest, newest := required(t, "go.mod", tc), required(t, "go.newest.mod", tc)
	stated := "testcontainers-go (" + oldest + " or later, for container mode; CI runs container mode on testcontainers-go " + oldest + " to " + newest + ")"
	if !strings.Contains(read(t, "README.md"), stated) {
		t.Errorf("README.md must say %q (the root's go.mod and go.newest.mod)", stated)
	}
}
