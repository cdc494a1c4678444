package twice

import (
	"flag"
	"os"
)

// Settings from the command line, with the environment as fallback:
//
//	-twice.run=TOKEN   TWICE_RUN    run only the scenario with this token
var runToken = flag.String("twice.run", "", "run only the twice scenario with this `token` (as printed on a failure's replay line); env TWICE_RUN")

func runFlag() string {
	if *runToken != "" {
		return *runToken
	}
	return os.Getenv("TWICE_RUN")
}
