package pgserver

import (
	"os"
	"syscall"
)

// sharedMemoryDir is the tmpfs most Linux systems mount for shared memory.
const sharedMemoryDir = "/dev/shm"

// tmpfsMagic is the f_type statfs(2) reports for a tmpfs.
const tmpfsMagic = 0x01021994

// minSharedMemoryRoom is the free space sharedMemoryDir must have to hold
// local clusters: a cluster with its WAL and a few dozen databases.
const minSharedMemoryRoom = 2 << 30

// clusterParent is the directory a local cluster's directory is made in.
// It is TMPDIR when that is set.
// Otherwise it is /dev/shm when that is a writable tmpfs with 2 GiB free,
// because a cluster creates and removes thousands of files (a database per
// check, cloned from its template, dropped later) and a disk's file system
// spends more time on that than the tests do on their statements.
// Otherwise it is os.TempDir().
func clusterParent() string {
	if os.Getenv("TMPDIR") != "" {
		return os.TempDir()
	}
	if roomyTmpfs(sharedMemoryDir) {
		return sharedMemoryDir
	}
	return os.TempDir()
}

// clusterParents are the directories clusterParent may choose, each once.
func clusterParents() []string {
	if os.TempDir() == sharedMemoryDir {
		return []string{sharedMemoryDir}
	}
	return []string{os.TempDir(), sharedMemoryDir}
}

// roomyTmpfs reports whether dir is a tmpfs this process may write to,
// with minSharedMemoryRoom free.
func roomyTmpfs(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != tmpfsMagic {
		return false
	}
	if st.Bavail*uint64(st.Bsize) < minSharedMemoryRoom {
		return false
	}
	return syscall.Access(dir, 0x2|0x1) == nil // W_OK|X_OK
}
