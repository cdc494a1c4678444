package inorder

import (
	"fmt"
	"strconv"
)

// Count is how many lanes a check plays on, how many scenarios it may play
// at once: the option (given: nil when not), else the setting value read
// from where from says (-twice.parallel, else TWICE_PARALLEL; "auto": one
// per core, of cores), else 1.
//
// The default is 1 because go test already spends the cores: it runs
// package test binaries side by side (-p defaults to the number of cores)
// and t.Parallel tests share a binary's cores, so a check that took every
// core by default would slow the suite it is part of and hold a database
// and its connections per core. A nightly run of the thorough budget, where
// one check plays hundreds of scenarios, asks for -twice.parallel=auto.
func Count(given *int, value, from string, cores int) (int, error) {
	if given != nil {
		if *given < 1 {
			return 0, fmt.Errorf("twice: Parallel(%d): give how many scenarios to play at once, 1 or more (1 plays them one after another)", *given)
		}
		return *given, nil
	}
	switch value {
	case "":
		return 1, nil
	case "auto":
		return cores, nil
	}
	n, err := strconv.Atoi(value)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("twice: %s=%s: give how many scenarios to play at once, a number of 1 or more (1 plays them one after another), or auto (one per core: %d here)", from, value, cores)
	}
	return n, nil
}

// Setting is the setting Count reads: -twice.parallel (flag), else
// TWICE_PARALLEL (env), with where it came from, or "" when neither is set.
func Setting(flag, env string) (value, from string) {
	if flag != "" {
		return flag, "-twice.parallel"
	}
	return env, "TWICE_PARALLEL"
}
