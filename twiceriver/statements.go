package twiceriver

// riverStatements are the names of the sqlc queries River's pgx driver
// sends (riverdriver/riverpgxv5 v0.51.2, internal/dbsqlc): a statement
// labelled "-- name: X" is River's only when X is one of them, so an app's
// own sqlc queries keep their labels. TestRiverStatementsAreRiversQueries
// holds the list against River's source.
var riverStatements = map[string]bool{
	"ColumnExists": true, "IndexExists": true, "IndexReindexArtifacts": true, "IndexesExist": true,
	"JobCancel": true, "JobCountByAllStates": true, "JobCountByQueueAndState": true, "JobCountByState": true,
	"JobDelete": true, "JobDeleteBefore": true, "JobDeleteMany": true, "JobGetAvailable": true,
	"JobGetByID": true, "JobGetByIDMany": true, "JobGetByKindMany": true, "JobGetCancelRequested": true,
	"JobGetStuck": true, "JobInsertFastMany": true, "JobInsertFastManyNoReturning": true, "JobInsertFull": true,
	"JobInsertFullMany": true, "JobKindList": true, "JobList": true, "JobRescueMany": true, "JobRetry": true,
	"JobSchedule": true, "JobSetStateIfRunningMany": true, "JobUpdate": true, "JobUpdateFull": true,
	"LeaderAttemptElect": true, "LeaderAttemptReelect": true, "LeaderDeleteExpired": true,
	"LeaderGetElectedLeader": true, "LeaderInsert": true, "LeaderResign": true,
	"NotificationDeleteBefore": true, "PGAdvisoryXactLock": true, "PGGetProductAndVersion": true,
	"PGNotifyMany": true, "QueueCreateOrSetUpdatedAt": true, "QueueDeleteExpired": true, "QueueGet": true,
	"QueueList": true, "QueueNameList": true, "QueuePause": true, "QueueResume": true, "QueueUpdate": true,
	"RiverMigrationDeleteAssumingMainMany": true, "RiverMigrationDeleteByLineAndVersionMany": true,
	"RiverMigrationGetAllAssumingMain": true, "RiverMigrationGetByLine": true, "RiverMigrationInsert": true,
	"RiverMigrationInsertMany": true, "RiverMigrationInsertManyAssumingMain": true, "SchemaGetExpired": true,
	"TableExists": true,
}
