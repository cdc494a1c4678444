package twicegue

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// argsAsJSON prints gue_jobs.args (bytea, as PostgreSQL prints it: \x…)
// as the JSON text it holds, so that twice compares it as JSON: leaf by
// leaf, the leaves that differ between two clean runs by shape
// (gue_jobs.args.at). Args that are not JSON print as they were.
func argsAsJSON(v string) string {
	b, err := hex.DecodeString(strings.TrimPrefix(v, `\x`))
	if err != nil || !strings.HasPrefix(v, `\x`) || !utf8.Valid(b) || !json.Valid(b) {
		return v
	}
	return string(b)
}
