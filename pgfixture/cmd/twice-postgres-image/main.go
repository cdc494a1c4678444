// Command twice-postgres-image builds a PostgreSQL image for pgfixture's
// container mode from the PostgreSQL server installed on this machine,
// without a registry: a machine whose Docker engine can pull nothing (not
// postgres, not even a base image) runs container mode on it.
//
// Run it from any project that requires twicekit, as root, on a Debian-like
// machine with Debian's postgresql-NN package and a Docker engine:
//
//	go run github.com/twicekit/twicekit/pgfixture/cmd/twice-postgres-image
//	export TWICE_POSTGRES_IMAGE=twicekit/postgres:15-local
//	TWICE_POSTGRES=container go test ./...
//
// It prints the image's name on its last line, skips the build when the
// image exists (-force rebuilds), and names it with -tag. -dockerfile FILE
// writes the Dockerfile it builds with to FILE: FROM scratch, a root
// filesystem of the host's server, the shared libraries it needs and a
// shell, and the official image's settings.
// The image runs on machines like this one (same architecture).
package main

import (
	_ "embed"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

var (
	//go:embed build.sh
	buildScript []byte
	//go:embed docker-entrypoint.sh
	entrypoint []byte
	//go:embed Dockerfile
	dockerfileText []byte
)

func main() {
	force := flag.Bool("force", false, "rebuild the image even when it exists")
	tag := flag.String("tag", "", "the image's name (default twicekit/postgres:<major>-local)")
	dockerfile := flag.String("dockerfile", "", "also write the Dockerfile it builds with to this file")
	flag.Parse()
	if err := run(*force, *tag, *dockerfile); err != nil {
		fmt.Fprintf(os.Stderr, "twice-postgres-image: %v\n", err)
		os.Exit(1)
	}
}

func run(force bool, tag, dockerfile string) error {
	dir, err := os.MkdirTemp("", "twice-postgres-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "build.sh"), buildScript, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "docker-entrypoint.sh"), entrypoint, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), dockerfileText, 0o644); err != nil {
		return err
	}
	if dockerfile != "" {
		if err := os.WriteFile(dockerfile, dockerfileText, 0o644); err != nil {
			return err
		}
	}
	args := []string{filepath.Join(dir, "build.sh")}
	if force {
		args = append(args, "--force")
	}
	if tag != "" {
		args = append(args, "--tag", tag)
	}
	cmd := exec.Command("bash", args...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "TWICE_IMAGE_FILES="+dir)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("build.sh: %w", err)
	}
	return nil
}
