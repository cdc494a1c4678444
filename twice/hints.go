package twice

import "github.com/twicekit/twicekit/internal/report"

// varyingLine is what a verbose test logs about the values found.
func varyingLine(rep *Report) string { return report.VaryingLine(rep.Job, rep.Varying) }
