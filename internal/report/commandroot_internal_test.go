package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A package of a workspace module is named from the workspace's root, where
// go test finds it; without a go.work that uses its module, from the module
// root.
func TestCommandRootIsTheWorkspaceThatUsesTheModule(t *testing.T) {
	root := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
	}
	write("go.mod", "module example.com/root\n")
	write("examples/go.mod", "module example.com/root/examples\n")
	write("examples/quickstart/x.go", "package quickstart\n")
	write("other/go.mod", "module example.com/other\n")
	write("other/pkg/x.go", "package pkg\n")
	write("go.work", "go 1.26.0\n\nuse (\n\t.\n\t./examples // the examples\n)\n\nuse ./lone\n")
	write("lone/go.mod", "module example.com/lone\n")

	t.Setenv("GOWORK", "")
	got, ok := commandRoot(filepath.Join(root, "examples", "quickstart"))
	require.True(t, ok)
	require.Equal(t, root, got, "a module in the go.work's use block")
	got, _ = commandRoot(filepath.Join(root, "lone"))
	require.Equal(t, root, got, "a module on a one-line use")
	got, _ = commandRoot(filepath.Join(root, "other", "pkg"))
	require.Equal(t, filepath.Join(root, "other"), got, "a module the go.work does not use")

	t.Setenv("GOWORK", "off")
	got, _ = commandRoot(filepath.Join(root, "examples", "quickstart"))
	require.Equal(t, filepath.Join(root, "examples"), got, "GOWORK=off")

	t.Setenv("GOWORK", filepath.Join(root, "go.work"))
	got, _ = commandRoot(filepath.Join(root, "examples", "quickstart"))
	require.Equal(t, root, got, "GOWORK naming the go.work")

	_, ok = commandRoot(string(filepath.Separator))
	require.False(t, ok, "no go.mod above")
}
