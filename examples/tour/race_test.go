//go:build race

package main

// Under the race detector every check runs several times slower, so with
// TWICE_LONG_TESTS=1 the determinism test runs each story's check 2 times
// instead of 20 unless -determinism.runs says otherwise (.ci/determinism,
// without -race, runs every check once in each of its processes).
const raceDetector = true
