package settings

import (
	"flag"
	"fmt"
	"os"
	"time"
)

var wallFlag = flag.String("twice.wall", "", "bound each twice check's wall time to this `duration` (default 2m): the scenarios play, every kind's first ones first, until it is spent, and a check that left any out fails unless twice.PartialCheck says why that is enough; env TWICE_WALL")

// Wall is the check's wall bound: -twice.wall, else TWICE_WALL, else def.
func Wall(def time.Duration) (time.Duration, error) {
	s, from := *wallFlag, "-twice.wall"
	if s == "" {
		s, from = os.Getenv("TWICE_WALL"), "TWICE_WALL"
	}
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("twice: %s=%q is not a duration: give one such as 5m or 90s (0 for no bound)", from, s)
	}
	return d, nil
}
