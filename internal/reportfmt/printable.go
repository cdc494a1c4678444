package reportfmt

import (
	"fmt"
	"strings"
	"unicode"
)

// Name is a name as reports print it: every control character
// (newlines and tabs too) escaped as Go would write it, so a job name can
// neither break a report's lines nor send a terminal escape sequence.
func Name(s string) string {
	if strings.IndexFunc(s, unicode.IsControl) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			b.WriteString(escapeRune(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Text is a report's text with every control character but the
// newlines and tabs that lay it out escaped (a job's error or SQL can carry
// any byte).
func Text(s string) string {
	if strings.IndexFunc(s, isEscaped) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isEscaped(r) {
			b.WriteString(escapeRune(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func isEscaped(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' }

func escapeRune(r rune) string {
	switch r {
	case '\n':
		return `\n`
	case '\t':
		return `\t`
	case '\r':
		return `\r`
	}
	if r < 0x10000 {
		return fmt.Sprintf(`\u%04x`, r)
	}
	return fmt.Sprintf(`\U%08x`, r)
}
