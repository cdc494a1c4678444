// Package pgserver starts and stops the PostgreSQL servers that pgfixture's
// providers stand on; pgfixture makes a Server of what it returns.
//
// # Local clusters
//
// Local runs initdb and postgres from the installed binaries (PATH first,
// then the highest version under /usr/lib/postgresql) in a directory of its
// own, as the postgres system user (else nobody) when the process is root.
// initdb's result is cached per binaries and user (initdb_cache.go).
// The cluster dies with the process; the directories of dead processes'
// clusters are removed when the next one starts.
//
// # Containers
//
// Container runs the image TWICE_POSTGRES_IMAGE names through
// testcontainers-go's postgres module, with or without Ryuk (ryuk.go).
// The containers of dead test processes are removed by label as Container
// starts, and in any mode by ReapContainers.
//
// # Owners
//
// An Owner names the process that made a cluster, a container or a fixture
// database (host, boot, PID, start time), so that the leftovers of dead
// processes can be told apart from live ones.
package pgserver
