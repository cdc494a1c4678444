package compare

import (
	"fmt"
	"testing"
)

// jsonLeaves names every scalar by its path (arrays by position) and finds
// its text, escapes and all.
func TestJSONLeavesByPath(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{`{"at": "2026-10-12T09:00:00Z", "tries": [{"code": 200}, 3], "note": "a \"b\"", "none": null, "empty": {}}`,
			`[at="2026-10-12T09:00:00Z" tries.0.code=200 tries.1=3 note="a \"b\"" none=null]`},
		{`[1, [true, "x"]]`, `[0=1 1.0=true 1.1="x"]`},
		{`"alone"`, `[="alone"]`},
	} {
		leaves, ok := jsonLeaves(c.doc)
		if !ok {
			t.Fatalf("%s: not JSON", c.doc)
		}
		var got []string
		for _, l := range leaves {
			if c.doc[l.start:l.end] != l.raw {
				t.Errorf("%s: leaf %s stands at %q", c.doc, l.path, c.doc[l.start:l.end])
			}
			got = append(got, l.path+"="+l.raw)
		}
		if fmt.Sprint(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.doc, got, c.want)
		}
	}
	if _, ok := jsonLeaves(`\x7b22`); ok {
		t.Error(`\x7b22 taken for JSON`)
	}
	if _, ok := jsonLeaves(`{"a": 1`); ok {
		t.Error("a cut document taken for JSON")
	}
}
