package inject

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// CreatedBy is where the calling goroutine was started: the function that
// ran the go statement and its file and line, "pkg.f.func1 at
// dir/file.go:12". The file is named relative to the root of its module
// (the nearest go.mod above it), as the reports print paths. The text
// carries no address and no goroutine ID, so the same go statement always
// reads the same. It is "" when the stack names no creator.
func CreatedBy() string {
	buf := make([]byte, 64<<10)
	buf = buf[:runtime.Stack(buf, false)]
	return createdBy(string(buf))
}

// createdBy is CreatedBy on a stack as runtime.Stack prints it.
func createdBy(stack string) string {
	lines := strings.Split(stack, "\n")
	for i, l := range lines {
		fn, ok := strings.CutPrefix(l, "created by ")
		if !ok {
			continue
		}
		if j := strings.Index(fn, " in goroutine "); j >= 0 {
			fn = fn[:j]
		}
		if slash := strings.LastIndex(fn, "/"); slash >= 0 {
			fn = fn[slash+1:] // the package's name, not its import path
		}
		if i+1 >= len(lines) {
			return fn
		}
		loc := strings.TrimSpace(lines[i+1])
		if j := strings.LastIndex(loc, " +0x"); j >= 0 {
			loc = loc[:j]
		}
		file, line := loc, ""
		if j := strings.LastIndex(loc, ":"); j >= 0 {
			file, line = loc[:j], loc[j+1:]
		}
		return fn + " at " + moduleRelative(file) + ":" + line
	}
	return ""
}

var moduleRoots sync.Map // directory → its module's root ("" for none)

// moduleRelative names file relative to the root of its module, with
// forward slashes; a file in no module keeps its base name.
func moduleRelative(file string) string {
	dir := filepath.Dir(file)
	root, ok := moduleRoots.Load(dir)
	if !ok {
		root = ""
		for d := dir; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				root = d
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
		moduleRoots.Store(dir, root)
	}
	if r := root.(string); r != "" {
		if rel, err := filepath.Rel(r, file); err == nil && !strings.HasPrefix(rel, "..") {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(file)
}
