package twicetemporal_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The Temporal SDK's dependency graph stays in this module: the root
// module's go.mod requires none of it (so minimal version selection never
// raises a user's grpc for them), and package twice imports none of it.
// protobuf is not on the list: asynq (package twiceasynq) requires it too.
func TestTheSDKStaysInThisModule(t *testing.T) {
	t.Parallel()
	gomod, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range []string{"go.temporal.io", "google.golang.org/grpc", "google.golang.org/genproto"} {
		if strings.Contains(string(gomod), dep) {
			t.Errorf("the root go.mod requires %s: keep the Temporal SDK's graph in twicetemporal/go.mod", dep)
		}
	}
	if testing.Short() {
		return
	}
	cmd := exec.Command("go", "list", "-deps", "./twice")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps ./twice: %v\n%s", err, out)
	}
	for _, p := range strings.Fields(string(out)) {
		if strings.HasPrefix(p, "go.temporal.io/") || strings.HasPrefix(p, "google.golang.org/") || strings.Contains(p, "/twicetemporal") {
			t.Errorf("package twice depends on %s", p)
		}
	}
}
