package compare

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode/utf8"
)

// An ORM that inlines values into its SQL text (bun does) puts a time or a
// uuid into a statement's label that changes with every run. The report
// prints such literals as the placeholders the diff uses (‹time 1›,
// ‹uuid 1›), numbered in the finding, so the same job prints the same
// bytes every run whatever the ORM.
var (
	inlineTimeRe = regexp.MustCompile(`'\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}(?::?\d{2})?)?'`)
	inlineUUIDRe = regexp.MustCompile(`'[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}'`)
	// A label cut short (inject's maxLabel) can end inside a literal.
	cutTimeRe = regexp.MustCompile(`'\d{4}-[0-9:. T+Z-]*$`)
	cutUUIDRe = regexp.MustCompile(`'[0-9a-fA-F]{8}-[0-9a-fA-F-]*$`)

	literalRe    = regexp.MustCompile(inlineTimeRe.String() + `|` + inlineUUIDRe.String())
	cutLiteralRe = regexp.MustCompile(cutTimeRe.String() + `|` + cutUUIDRe.String())
)

// MarkLiterals replaces the times and uuids quoted in s by markers. A label
// cut short was cut where the literals' own lengths put the cut (a time's
// fraction has 0 to 6 digits): it is cut again as if every literal had its
// longest length, so that the same statement prints the same label.
func MarkLiterals(s string) string {
	if len(s) < 10 || !strings.Contains(s, "'") {
		return s
	}
	body, cut := strings.CutSuffix(s, "…")
	var out strings.Builder
	width := 0 // in runes, each literal counted at its longest
	full := false
	add := func(text string, w int) {
		if full {
			return
		}
		if cut && width+w > labelCut {
			if w == utf8.RuneCountInString(text) { // plain text: keep what fits
				r := []rune(text)
				out.WriteString(string(r[:labelCut-width]))
			}
			full = true
			return
		}
		out.WriteString(text)
		width += w
	}
	for body != "" {
		loc := literalRe.FindStringIndex(body)
		if loc == nil {
			if m := cutLiteralRe.FindStringIndex(body); cut && m != nil {
				add(body[:m[0]], utf8.RuneCountInString(body[:m[0]]))
				kind := "time"
				if cutUUIDRe.MatchString(body[m[0]:]) {
					kind = "uuid"
				}
				add("'"+marker(kind, "")+"'", longest[kind])
				body = ""
				break
			}
			add(body, utf8.RuneCountInString(body))
			break
		}
		add(body[:loc[0]], utf8.RuneCountInString(body[:loc[0]]))
		lit := body[loc[0]:loc[1]]
		kind := "time"
		if inlineUUIDRe.MatchString(lit) {
			kind = "uuid"
		}
		add("'"+marker(kind, lit)+"'", longest[kind])
		body = body[loc[1]:]
	}
	if cut {
		return out.String() + "…"
	}
	return out.String()
}

// labelCut is where inject cuts a long label (its maxLabel, less the "…").
const labelCut = 95

// longest is the longest a quoted literal of each kind prints in SQL.
var longest = map[string]int{"time": len("'2006-01-02 15:04:05.999999+07:00'"), "uuid": 38}

// MarkLiteralsIn replaces the literals in every string of list.
func MarkLiteralsIn(list []string) []string {
	for i := range list {
		list[i] = MarkLiterals(list[i])
	}
	return list
}

// marker is the marker of a literal: its kind and a hash of its value.
func marker(kind, v string) string {
	sum := sha256.Sum256([]byte(v))
	return markOpen + kind + " " + hex.EncodeToString(sum[:6]) + markClose
}
