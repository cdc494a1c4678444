// Package scenarios describes the scenario kinds of a check. Kind and
// Scenario are twice's ScenarioKind and Scenario, in the same order and
// field for field. The table kinds gives each kind its name in the JSON
// report, its token (what -twice.run and the replay lines take) and its
// words, and says how it is planned (kinds.go). Plan lists a reference
// run's scenarios, kind by kind, at the crash points a budget kept
// (plan.go). ParseToken reads a token back, IsConcurrentToken and
// IsDuplicateToken tell the concurrent tokens apart, and UnknownOnly is the
// error that lists a job's tokens when -twice.run names none of them
// (token.go). Draw draws a rapid check's scenarios, RapidReplayLine is a
// failure's replay line under rapid, and ShrinkNote says when rapid's
// shrinking stopped at its time limit (rapid.go). The table plays says how
// each kind is played: which deliveries of job-1 and job-2 with which
// fault, or two attempts at once, through a Player of twice's callbacks
// (play.go).
//
// twice keeps the public ScenarioKind and Scenario and converts them at the
// boundary. It keeps the checker that delivers a job, the budgets, the
// points thin.KeepPoints keeps, and which concurrent scenarios a check
// plays.
package scenarios
