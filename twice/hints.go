package twice

import (
	"fmt"
	"strings"
)

// varyingLine is what a verbose test logs about the values found.
func varyingLine(rep *Report) string {
	return fmt.Sprintf("twice: %s: compared by shape (they differ between two clean runs): %s", rep.Job, strings.Join(rep.Varying, ", "))
}
