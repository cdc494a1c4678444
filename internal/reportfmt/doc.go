// Package reportfmt holds the formats twice's report writers share that
// need no type of twice.
//
// It escapes the control characters of names and texts that reports print
// (printable.go). It draws Mermaid sequence diagrams: participants, lines,
// a point as a message or a note, effect providers as participants
// (mermaid.go). It escapes GitHub workflow commands and makes file names
// safe (github.go). It says counts with their nouns agreeing, and counts too
// large to read (count.go).
//
// twice walks a scenario's timeline and calls it; the writers themselves
// (text, JSON, Markdown, publishing, shards) are still in twice.
package reportfmt
