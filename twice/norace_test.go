//go:build !race

package twice_test

const raceDetector = false
