// Package leakcheck ends every test binary of this repository: a run whose
// tests passed fails when it leaves a goroutine behind (go.uber.org/goleak).
//
//	func TestMain(m *testing.M) { leakcheck.Exit(pgfixture.Main(m)) }
//
// It checks after pgfixture.Main has stopped the shared server, so the
// pools and the container client it held must be gone too.
package leakcheck

import (
	"fmt"
	"io"
	"os"

	"go.uber.org/goleak"
)

// Exit exits the process with code, or with 1 when code is 0 and some
// goroutine other than the main one is still running (goleak retries for a
// while first, so goroutines that are ending are not counted).
func Exit(code int) {
	os.Exit(Code(code))
}

// Code is Exit without exiting: it returns the code Exit would exit with,
// after printing the leaked goroutines to standard error.
func Code(code int) int { return check(code, os.Stderr) }

func check(code int, w io.Writer) int {
	if code != 0 {
		return code
	}
	if err := goleak.Find(); err != nil {
		fmt.Fprintf(w, "leakcheck: the tests passed but left goroutines running:\n%v\n", err)
		return 1
	}
	return 0
}
