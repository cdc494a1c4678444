package report

import (
	"os"
	"path/filepath"
	"strings"
)

// commandRoot is the directory that the go command is typed in for the
// package in dir: the directory of the go.work whose use directives list
// dir's module, else dir's module root (the nearest go.mod). A package of
// a workspace module is then named from the workspace's root
// ("./examples/quickstart"), where go test finds it. GOWORK=off, or a
// GOWORK naming another file, leaves the module root. found is false when
// no go.mod is above dir.
func commandRoot(dir string) (root string, found bool) {
	mod := ""
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			mod = d
			break
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
	work := os.Getenv("GOWORK")
	switch {
	case work == "off":
		return mod, true
	case work != "":
		if uses(work, mod) {
			return filepath.Dir(work), true
		}
		return mod, true
	}
	for d := mod; ; d = filepath.Dir(d) {
		if f := filepath.Join(d, "go.work"); uses(f, mod) {
			return d, true
		}
		if filepath.Dir(d) == d {
			return mod, true
		}
	}
}

// uses says whether the go.work file lists the module directory mod in a
// use directive (one line, "use ./x", or a block, "use ( ... )").
func uses(workFile, mod string) bool {
	b, err := os.ReadFile(workFile)
	if err != nil {
		return false
	}
	base := filepath.Dir(workFile)
	inBlock := false
	for _, line := range strings.Split(string(b), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		var dir string
		switch {
		case inBlock && len(f) == 1 && f[0] == ")":
			inBlock = false
			continue
		case inBlock && len(f) == 1:
			dir = f[0]
		case len(f) == 2 && f[0] == "use" && f[1] == "(":
			inBlock = true
			continue
		case len(f) == 2 && f[0] == "use":
			dir = f[1]
		default:
			continue
		}
		dir = strings.Trim(dir, "\"`")
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(base, dir)
		}
		if filepath.Clean(dir) == filepath.Clean(mod) {
			return true
		}
	}
	return false
}
