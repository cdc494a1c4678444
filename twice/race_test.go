//go:build race

package twice_test

// Under the race detector every check runs several times slower and its
// timing-bound waits (settle waits, attempt timeouts) have less room, so
// the tests keep go test's default parallelism (parallelUnlessSet).
const raceDetector = true
