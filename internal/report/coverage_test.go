package report

import "testing"

// What a verbose test logs about values that differ between clean runs.
func TestVaryingLine(t *testing.T) {
	if got, want := VaryingLine("ship order 11", []string{"orders.shipped_at", "users.token"}), "twice: ship order 11: compared by shape (they differ between two clean runs): orders.shipped_at, users.token"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
