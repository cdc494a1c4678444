package reportfmt

import (
	"fmt"
	"strings"
)

// Count says n things with the noun agreeing: "1 point", "2 points",
// "5 deliveries".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	if stem, ok := strings.CutSuffix(noun, "y"); ok && !strings.HasSuffix(stem, "a") && !strings.HasSuffix(stem, "e") {
		return fmt.Sprintf("%d %sies", n, stem)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// CountText says a count that may be too large to read ("more than a
// billion").
func CountText(n int64) string {
	if n >= 1_000_000_000 {
		return "more than a billion"
	}
	return fmt.Sprint(n)
}
