package pgfixture

import (
	"fmt"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// available reports whether the server can create the extension.
func available(t *testing.T, srv *Server, name string) bool {
	t.Helper()
	var n int
	require.NoError(t, srv.admin.QueryRow(ctxT(t), "SELECT count(*) FROM pg_available_extensions WHERE name = $1", name).Scan(&n))
	return n > 0
}

// TestMissingExtensionSaysWhatToInstall: a migration creating pgvector's
// extension on a server without it fails with what to install for this
// mode; where the server has it, the migration works.
func TestMissingExtensionSaysWhatToInstall(t *testing.T) {
	t.Parallel()
	ctx, srv := ctxT(t), sharedT(t)
	_, err := srv.CreateDB(ctx, SQL("CREATE EXTENSION vector", "CREATE TABLE items (id int PRIMARY KEY, embedding vector(3))"))
	if available(t, srv, "vector") {
		require.NoError(t, err)
		return
	}
	require.Error(t, err)
	major := srv.version / 10000
	msg := err.Error()
	assert.Contains(t, msg, "migration 1 failed")
	switch srv.Mode() {
	case "local":
		assert.Contains(t, msg, fmt.Sprintf(`pgfixture: the local PostgreSQL %d has no extension "vector": install Debian's postgresql-%d-pgvector (apt-get install postgresql-%d-pgvector), in Debian from trixie on`, major, major, major))
		assert.Contains(t, msg, fmt.Sprintf("TWICE_POSTGRES=container TWICE_POSTGRES_IMAGE=pgvector/pgvector:pg%d", major))
	case "container":
		assert.Contains(t, msg, fmt.Sprintf(`has no extension "vector": set TWICE_POSTGRES_IMAGE to an image that has it (pgvector/pgvector:pg%d)`, major))
	default:
		assert.Contains(t, msg, `has no extension "vector": install it on that server`)
	}
}

// TestExtensionFromDebianPackage: in local mode, an extension installed
// from Debian's package (.ci/run installs postgresql-NN-ip4r) migrates.
func TestExtensionFromDebianPackage(t *testing.T) {
	t.Parallel()
	srv := sharedT(t)
	if srv.Mode() != "local" {
		t.Skip("the Debian package is installed on this host, which only local mode runs")
	}
	if !available(t, srv, "ip4r") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("ip4r is not installed: .ci/run installs postgresql-%d-ip4r", srv.version/10000)
		}
		t.Skipf("apt-get install postgresql-%d-ip4r to run this test", srv.version/10000)
	}
	db := New(t, SQL("CREATE EXTENSION ip4r", "CREATE TABLE allowlist (net ip4r PRIMARY KEY)", "INSERT INTO allowlist VALUES ('10.0.0.0/8')"))
	var n int
	require.NoError(t, db.Pool().QueryRow(ctxT(t), "SELECT count(*) FROM allowlist WHERE net >>= '10.1.2.3'::ip4").Scan(&n))
	assert.Equal(t, 1, n)
}

func TestMissingExtensionMessages(t *testing.T) {
	t.Parallel()
	assert.Equal(t, "", missingExtension(nil))
	assert.Equal(t, "", missingExtension(fmt.Errorf("plain")))
}
