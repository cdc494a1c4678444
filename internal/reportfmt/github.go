package reportfmt

import "strings"

// FileSafe is s with every rune but ASCII letters, digits, - and . made
// an underscore, so that it is safe in a file name.
func FileSafe(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			b.WriteRune(r)
		default:
			b.WriteRune('_')
		}
	}
	return b.String()
}

// WorkflowData escapes a GitHub workflow command's message.
func WorkflowData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

// WorkflowProperty escapes a GitHub workflow command's property (file,
// title).
func WorkflowProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
