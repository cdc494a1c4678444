package inorder

import (
	"strings"
	"testing"
)

// The option wins over the setting; the setting is a count or auto; a bad
// one says where it came from.
func TestCount(t *testing.T) {
	three, zero := 3, 0
	for _, c := range []struct {
		given       *int
		value, from string
		want        int
		err         string
	}{
		{&three, "auto", "TWICE_PARALLEL", 3, ""},
		{&zero, "", "", 0, "Parallel(0): give how many scenarios"},
		{nil, "", "TWICE_PARALLEL", 1, ""},
		{nil, "auto", "TWICE_PARALLEL", 8, ""},
		{nil, "2", "-twice.parallel", 2, ""},
		{nil, "many", "TWICE_PARALLEL", 0, "TWICE_PARALLEL=many: give how many scenarios to play at once, a number of 1 or more (1 plays them one after another), or auto (one per core: 8 here)"},
		{nil, "0", "-twice.parallel", 0, "-twice.parallel=0: "},
	} {
		n, err := Count(c.given, c.value, c.from, 8)
		if n != c.want || (c.err == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v %q: got %d, %v", c.given, c.value, n, err)
		}
	}
}

// The flag wins over the environment, and each says where it came from.
func TestSettingPrefersTheFlag(t *testing.T) {
	for _, c := range []struct{ flag, env, value, from string }{
		{"4", "2", "4", "-twice.parallel"},
		{"", "2", "2", "TWICE_PARALLEL"},
		{"", "", "", "TWICE_PARALLEL"},
	} {
		if v, from := Setting(c.flag, c.env); v != c.value || from != c.from {
			t.Errorf("Setting(%q, %q) = %q, %q; want %q, %q", c.flag, c.env, v, from, c.value, c.from)
		}
	}
}
