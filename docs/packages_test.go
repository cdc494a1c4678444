package docs_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// maxPackageLines is the most lines of non-test Go code one package holds
// (issue 42: one idea per package).
const maxPackageLines = 4000

// overLimit are the packages allowed past maxPackageLines, each with why.
// A package leaves this list when it is split.
var overLimit = map[string]string{
	"twice":                   "issue 42: its split is under way",
	"examples/dataaccess/ent": "ent's generated code for the ledger's two tables (go generate ./ent)",
}

// TestNoPackageIsTooLarge: no package of any module in the repository holds
// more than maxPackageLines lines of non-test Go code, but those overLimit
// names.
func TestNoPackageIsTooLarge(t *testing.T) {
	lines := map[string]int{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		lines[filepath.ToSlash(dir)] += bytes.Count(b, []byte("\n"))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range slices.Sorted(maps.Keys(lines)) {
		n := lines[dir]
		_, allowed := overLimit[dir]
		switch {
		case n > maxPackageLines && !allowed:
			t.Errorf("%s holds %d lines of non-test code, more than %d: split it along its ideas (docs/DESIGN.md#packages)", dir, n, maxPackageLines)
		case n <= maxPackageLines && allowed:
			t.Errorf("%s holds %d lines of non-test code, within %d: take it out of overLimit", dir, n, maxPackageLines)
		}
	}
	for dir := range overLimit {
		if _, ok := lines[dir]; !ok {
			t.Errorf("overLimit names %s, which holds no Go code", dir)
		}
	}
}

// modulePath is the root module's path.
const modulePath = "github.com/twicekit/twicekit"

// packageRow is a row of docs/DESIGN.md's package table.
type packageRow struct {
	line    int      // its position in the table, from 0
	imports []string // the packages of this module it imports, tests' imports left out
	root    bool     // of the root module: not a row of other modules ("its own module", "examples/*")
}

// packageTable reads docs/DESIGN.md's package table: each package the first
// column names, with the imports the third column names.
func packageTable(t *testing.T) map[string]packageRow {
	t.Helper()
	text := read(t, "docs/DESIGN.md")
	_, after, ok := strings.Cut(text, "\n## Packages\n")
	if !ok {
		t.Fatal("docs/DESIGN.md has no section ## Packages")
	}
	code := regexp.MustCompile("`([^`]+)`")
	rows := map[string]packageRow{}
	sc := bufio.NewScanner(strings.NewReader(after))
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) != 3 {
			continue
		}
		var imports []string
		for _, part := range strings.Split(strings.TrimSuffix(cells[2], " |"), ", ") {
			if strings.Contains(part, "(tests)") {
				continue
			}
			for _, m := range code.FindAllStringSubmatch(part, -1) {
				imports = append(imports, m[1])
			}
		}
		root := !strings.Contains(cells[0], "module") && !strings.Contains(cells[0], "*")
		for _, m := range code.FindAllStringSubmatch(cells[0], -1) {
			rows[m[1]] = packageRow{line: n, imports: imports, root: root}
		}
		n++
	}
	return rows
}

// TestPackageTableMatchesTheTree: every package of the root module has a row
// in docs/DESIGN.md's package table that names the packages of this module
// it imports, each of them in a row below its own (arrows point one way),
// and every row of the root module's is a package of it.
func TestPackageTableMatchesTheTree(t *testing.T) {
	rows := packageTable(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOWORK=off")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], modulePath), "/")
		seen[pkg] = true
		if pkg == "docs" {
			continue
		}
		row, ok := rows[pkg]
		if !ok {
			t.Errorf("docs/DESIGN.md's package table has no row for %s", pkg)
			continue
		}
		var imports []string
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				imports = append(imports, rel)
			}
		}
		slices.Sort(imports)
		listed := slices.Sorted(slices.Values(row.imports))
		if !slices.Equal(imports, listed) {
			t.Errorf("%s imports %s; docs/DESIGN.md's package table says %s", pkg, listOrNone(imports), listOrNone(listed))
		}
		for _, imp := range imports {
			if below, ok := rows[imp]; ok && below.line <= row.line {
				t.Errorf("%s imports %s, whose row in docs/DESIGN.md's package table is not below its own", pkg, imp)
			}
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(rows)) {
		if rows[pkg].root && !seen[pkg] {
			t.Errorf("docs/DESIGN.md's package table has a row for %s, which is no package of the root module", pkg)
		}
	}
}

func listOrNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return fmt.Sprint(list)
}
