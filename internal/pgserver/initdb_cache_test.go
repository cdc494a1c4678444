package pgserver

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestInitdbCache: the first cluster runs initdb and fills the cache; the
// next one is a copy of the cache entry, owned by the user PostgreSQL runs
// as; an entry without its completion marker is never used.
func TestInitdbCache(t *testing.T) {
	bins, err := FindLocalBins()
	if err != nil {
		t.Skipf("no local PostgreSQL binaries: %v", err)
	}
	cred, err := runAs()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv(envInitdbCache, t.TempDir())
	entry := initdbCacheEntry(bins, cred)
	if entry == "" {
		t.Fatal("no cache entry although TWICE_INITDB_CACHE names a directory")
	}
	ctx := context.Background()
	env := append(os.Environ(), "LC_ALL=C", "LANG=C", "TZ=UTC")
	newData := func() string {
		// Not t.TempDir: its parent is closed to the user PostgreSQL runs as.
		dir, err := os.MkdirTemp("", "twicekit-initdb-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if cred != nil {
			if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
				t.Fatal(err)
			}
		}
		data := filepath.Join(dir, "data")
		if err := initData(ctx, bins, dir, data, cred, env); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(data, "PG_VERSION")); err != nil {
			t.Fatalf("the data directory has no PG_VERSION: %v", err)
		}
		return data
	}

	newData()
	if _, err := os.Stat(filepath.Join(entry, initdbCacheMarker)); err != nil {
		t.Fatalf("the first initdb did not fill the cache: %v", err)
	}
	// A file only the cache entry has shows that the next cluster is its copy.
	sentinel := filepath.Join(entry, "data", "twicekit-sentinel")
	if err := os.WriteFile(sentinel, []byte("from the cache"), 0o600); err != nil {
		t.Fatal(err)
	}
	data := newData()
	got, err := os.ReadFile(filepath.Join(data, "twicekit-sentinel"))
	if err != nil || string(got) != "from the cache" {
		t.Fatalf("the second data directory is not a copy of the cache entry: %q, %v", got, err)
	}
	if cred != nil {
		st, err := os.Stat(filepath.Join(data, "PG_VERSION"))
		if err != nil {
			t.Fatal(err)
		}
		if uid := statUID(st); uid != cred.Uid {
			t.Fatalf("copied files belong to uid %d, want %d (the user PostgreSQL runs as)", uid, cred.Uid)
		}
	}

	// Without the marker (an interrupted fill) the entry is not used.
	if err := os.Remove(filepath.Join(entry, initdbCacheMarker)); err != nil {
		t.Fatal(err)
	}
	data = newData()
	if _, err := os.Stat(filepath.Join(data, "twicekit-sentinel")); !os.IsNotExist(err) {
		t.Fatalf("an entry without its completion marker was copied (stat: %v)", err)
	}
}

// TestInitdbCacheOff: TWICE_INITDB_CACHE=off leaves no cache behind.
func TestInitdbCacheOff(t *testing.T) {
	t.Setenv(envInitdbCache, "off")
	if e := initdbCacheEntry("/nonexistent", nil); e != "" {
		t.Fatalf("cache entry %q with TWICE_INITDB_CACHE=off", e)
	}
}

func statUID(st os.FileInfo) uint32 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Uid
	}
	return ^uint32(0)
}
