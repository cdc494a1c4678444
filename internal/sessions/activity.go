package sessions

// ActivityOf is an SQL FROM item: the rows pg_stat_activity has for the
// backends on database db, an SQL expression ("$1", "current_database()"),
// with the columns of pg_stat_get_activity, the function under the view
// (pid, application_name, state, backend_type, client_addr, query, …; not
// datname or usename). pg_stat_activity computes every column of
// every backend on the server, clipping each one's query text character by
// character; ActivityOf reads each backend's database first and computes
// the rows of that database's backends only. The check asks often (lock
// waits while a statement runs, sessions ending between scenarios), and
// a server shared by parallel tests has many backends on other databases.
// TestActivityOfIsPgStatActivity holds it to the view.
func ActivityOf(db string) string {
	return `(SELECT a.* FROM pg_stat_get_backend_idset() AS b(id),
  LATERAL pg_stat_get_activity(pg_stat_get_backend_pid(b.id)) AS a
  WHERE pg_stat_get_backend_pid(b.id) IS NOT NULL
    AND pg_stat_get_backend_dbid(b.id) = (SELECT oid FROM pg_database WHERE datname = ` + db + `))`
}
