package inject

import "testing"

// customSettingSQL tells the statements that may define a custom setting
// (whose name has a dot) from those that cannot.
func TestCustomSettingSQL(t *testing.T) {
	for sql, want := range map[string]bool{
		"SET app.tenant = 'acme'":                                true,
		"set local app.tenant to 'acme'":                         true,
		"BEGIN; SET SESSION myapp.user_id = 7; COMMIT":           true,
		`SET "app".tenant = 1`:                                   true,
		"SELECT set_config('app.tenant', $1, true)":              true,
		"SELECT SET_CONFIG ('app.tenant', 'x', false)":           true,
		"SET search_path = app, public":                          false,
		"SET LOCAL lock_timeout = '1s'":                          false,
		"UPDATE accounts SET balance = balance - 1 WHERE id = 1": false,
		"UPDATE t SET x = s.x FROM s":                            false,
		"SELECT current_setting('app.tenant', true)":             false,
	} {
		if got := customSettingSQL.MatchString(sql); got != want {
			t.Errorf("customSettingSQL.MatchString(%q) = %v, want %v", sql, got, want)
		}
	}
}
