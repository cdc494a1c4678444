package twice

// Crash states explored once: two crash points that leave the same world
// (rows, sequences, effects) lead to the same redelivery, so the check plays
// the first and reports the others as covered by it, unless the first broke
// a promise. internal/crashstates fingerprints the worlds during the
// reference run and keeps the cache. twice keeps the option and hands it
// the crash points of its plan.

// EveryCrashPoint plays every crash point, even those that leave the world
// exactly as an earlier one does (by default such a point is covered by the
// earlier one and not replayed).
func EveryCrashPoint() Option {
	return optionFunc(func(c *config) { c.EveryCrashPoint = true })
}
