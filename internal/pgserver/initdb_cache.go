package pgserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// envInitdbCache switches the initdb cache off ("off") or moves it (a
// directory). By default it lives under the user's cache directory
// (os.UserCacheDir, e.g. ~/.cache/twicekit/initdb).
const envInitdbCache = "TWICE_INITDB_CACHE"

// initdbArgs are the arguments every throwaway cluster is initialised with
// (after -D DIR). They are part of the cache key.
var initdbArgs = []string{"-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"}

// initdbCacheMarker is written last into a cache entry: an entry without it
// was interrupted and is never used.
const initdbCacheMarker = "twicekit-initdb-complete"

// initData creates the data directory data of a new cluster: a copy of the
// cached result of initdb for these binaries and this user when there is
// one (a few tens of milliseconds instead of most of a second), else initdb
// itself, whose result is then cached for the next test binary. A cache
// that cannot be read or written is skipped silently: the cluster is made
// by initdb as before.
func initData(ctx context.Context, bins, dir, data string, cred *syscall.Credential, env []string) error {
	entry := initdbCacheEntry(bins, cred)
	if entry != "" {
		if _, err := os.Stat(filepath.Join(entry, initdbCacheMarker)); err == nil {
			if err := copyTree(filepath.Join(entry, "data"), data, cred); err == nil {
				return nil
			}
			_ = os.RemoveAll(data)
		}
	}
	initdb := exec.CommandContext(ctx, binPath(bins, "initdb"), append([]string{"-D", data}, initdbArgs...)...)
	initdb.Dir = dir
	initdb.Env = env
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fmt.Errorf("initdb failed: %w: %s", err, tail(out, 800))
	}
	if entry != "" {
		_ = fillInitdbCache(entry, data)
	}
	return nil
}

// initdbCacheEntry is the cache directory for the result of initdb with
// these binaries (path, size and modification time of initdb and postgres),
// arguments and owner; "" when the cache is off or has no home.
func initdbCacheEntry(bins string, cred *syscall.Credential) string {
	root := initdbCacheRoot()
	if root == "" {
		return ""
	}
	h := sha256.New()
	for _, name := range []string{"initdb", "postgres"} {
		p := binPath(bins, name)
		st, err := os.Stat(p)
		if err != nil {
			return ""
		}
		fmt.Fprintf(h, "%s %d %d\n", p, st.Size(), st.ModTime().UnixNano())
	}
	fmt.Fprintf(h, "%s\n", strings.Join(initdbArgs, " "))
	if cred != nil {
		fmt.Fprintf(h, "uid %d gid %d\n", cred.Uid, cred.Gid)
	} else {
		fmt.Fprintf(h, "uid %d\n", os.Geteuid())
	}
	return filepath.Join(root, hex.EncodeToString(h.Sum(nil))[:24])
}

// fillInitdbCache copies a freshly initialised data directory into entry:
// first into a directory of its own, then renamed into place, so a reader
// never sees half an entry and two binaries filling it at once do no harm.
func fillInitdbCache(entry, data string) error {
	if err := os.MkdirAll(filepath.Dir(entry), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(entry), ".fill-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := copyTree(data, filepath.Join(tmp, "data"), nil); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, initdbCacheMarker), nil, 0o644); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, entry); err != nil {
		if _, statErr := os.Stat(filepath.Join(entry, initdbCacheMarker)); statErr == nil {
			return nil // another binary filled it first
		}
		return err
	}
	return nil
}

// copyTree copies the directory src to dst (which must not exist) with the
// modes of src, and hands every copy to cred's user when cred is set.
func copyTree(src, dst string, cred *syscall.Credential) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			if err := os.Mkdir(target, info.Mode().Perm()); err != nil {
				return err
			}
		case info.Mode().IsRegular():
			if err := copyFile(p, target, info.Mode().Perm()); err != nil {
				return err
			}
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(link, target); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: not a file, directory or symlink", p)
		}
		if cred != nil {
			if err := os.Lchown(target, int(cred.Uid), int(cred.Gid)); err != nil {
				return err
			}
		}
		return nil
	})
}

func copyFile(src, dst string, perm fs.FileMode) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if _, err := io.Copy(out, in); err != nil {
		return err
	}
	return os.Chmod(dst, perm) // the umask narrowed OpenFile's mode
}

// initdbCacheRoot is where this user's initdb cache lives; "" when it is
// off (TWICE_INITDB_CACHE=off) or the user has no cache directory.
func initdbCacheRoot() string {
	root := os.Getenv(envInitdbCache)
	switch {
	case root == "off" || root == "0":
		return ""
	case root != "":
		return root
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "twicekit", "initdb")
}
