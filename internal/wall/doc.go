// Package wall spends a check's wall budget. A Clock is the budget as a
// check spends it: whether a scenario started now ends within it, the soft
// deadline at which the concurrent scenarios stop widening so that the
// sequential ones still to play get their share, and what it left out or
// cut short, in the words of the report (clock.go). Order is the order the
// sequential scenarios play in under a budget: in rounds, every kind's
// first scenario before any kind's second (order.go).
//
// twice keeps the options (WallBudget, PartialCheck), reads the budget
// through internal/settings (-twice.wall, TWICE_WALL), and hands in its
// plan's kinds.
package wall
