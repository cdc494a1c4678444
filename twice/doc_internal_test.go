package twice

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Every doc link of doc.go ([Name] or [Type.Method]) names an export of
// the package, so a rename cannot leave a dead link in the package doc.
func TestTheDocLinksResolve(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	exported := map[string]bool{"Report.String": true}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range exportedNames(f) {
			exported[n] = true
		}
	}
	links := regexp.MustCompile(`\[([A-Z]\w*(?:\.[A-Z]\w*)?)\]`).FindAllStringSubmatch(string(doc), -1)
	if len(links) == 0 {
		t.Fatal("doc.go has no doc links")
	}
	for _, l := range links {
		if !exported[l[1]] {
			t.Errorf("doc.go links [%s], which the package does not export", l[1])
		}
	}
}

// exportedNames lists a file's exported top-level names, and the exported
// methods and fields of exported types as Type.Method and Type.Field.
func exportedNames(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			if d.Recv == nil {
				out = append(out, d.Name.Name)
				continue
			}
			typ := d.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			if id, ok := typ.(*ast.Ident); ok && id.IsExported() && d.Name.Name != "String" && d.Name.Name != "Error" {
				out = append(out, id.Name+"."+d.Name.Name)
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch spec := spec.(type) {
				case *ast.TypeSpec:
					if !spec.Name.IsExported() {
						continue
					}
					out = append(out, spec.Name.Name)
					if st, ok := spec.Type.(*ast.StructType); ok {
						for _, f := range st.Fields.List {
							for _, n := range f.Names {
								if n.IsExported() {
									out = append(out, spec.Name.Name+"."+n.Name)
								}
							}
						}
					}
				case *ast.ValueSpec:
					for _, n := range spec.Names {
						if n.IsExported() {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}
