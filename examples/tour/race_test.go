//go:build race

package main

// Under the race detector every check runs several times slower, so the
// determinism test runs each story's check 3 times instead of 20 unless
// -determinism.runs says otherwise (.ci/determinism, without -race, runs
// every check once in each of 50 processes).
const raceDetector = true
