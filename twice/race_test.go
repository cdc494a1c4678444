//go:build race

package twice_test

// Under the race detector every check runs several times slower and holds
// its sessions longer: TestMain runs fewer tests at once.
const raceDetector = true
