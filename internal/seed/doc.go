// Package seed keeps the state every scenario of a check starts from. A
// State is the seed's rows and sequence values, kept as a checkpoint the
// first time the check resets its database, and restored by every later
// reset, on the check's database and on its lanes' (state.go). It tells a
// check whose reference run changed tables the check does not compare and
// none it does, so that no scenario could fail on the database
// (uncompared.go). It names the tables a reference run changed although
// the check saw none of its statements (uncompared.go).
//
// twice keeps the Job's Seed and the options (Schemas), hands in its
// database, its seed and its snapshot options, and marks the user's
// mistakes (a seed that fails, tables left out of Schemas) as such.
package seed
