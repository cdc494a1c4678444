package migration

import "testing"

func TestLineCol(t *testing.T) {
	if line, col, text := lineCol("ab\ncdé\nfg", 7); line != 2 || col != 4 || text != "cdé" {
		t.Errorf("lineCol(…, 7) = %d, %d, %q; want 2, 4, \"cdé\"", line, col, text)
	}
	if line, col, _ := lineCol("x", 1); line != 1 || col != 1 {
		t.Errorf("lineCol(x, 1) = %d, %d; want 1, 1", line, col)
	}
}
