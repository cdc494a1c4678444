package twice

// LoseStatementReplies plays the statement reply-lost scenarios
// (sql-reply-lost@N) under every budget, not only the thorough one: at every
// statement of the reference run that commits (an autocommit statement, a
// COMMIT), PostgreSQL applies and commits it, the connection breaks before
// its reply, and the job carries on with the connection error as it would in
// production (its own retry, its own failure path); the queue then does what
// it does with the outcome. A job that takes that error for "not done"
// applies the statement twice or records a failure for work that was done.
func LoseStatementReplies() Option {
	return optionFunc(func(c *config) { c.LoseReplies = true })
}
