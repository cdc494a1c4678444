package pgserver

import (
	"os"
	"testing"
)

// A TMPDIR that is set is where local clusters go; unset, a roomy tmpfs
// at /dev/shm is, else os.TempDir().
func TestClusterParent(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	if got := clusterParent(); got != dir {
		t.Errorf("with TMPDIR=%s, clusterParent() = %s", dir, got)
	}
	t.Setenv("TMPDIR", "")
	want := os.TempDir()
	if roomyTmpfs(sharedMemoryDir) {
		want = sharedMemoryDir
	}
	if got := clusterParent(); got != want {
		t.Errorf("with TMPDIR unset, clusterParent() = %s, want %s", got, want)
	}
	if roomyTmpfs("/proc") {
		t.Error("roomyTmpfs(/proc) = true; /proc is no tmpfs")
	}
}
