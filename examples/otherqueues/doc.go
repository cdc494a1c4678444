// Package otherqueues checks jobs of queues other than River with twice's
// queue options: an asynq handler (a terminal error, asynq.SkipRetry) and a
// gue handler that works in the job's own transaction (j.Tx(), so the ack
// commits with the work). Its test file is the README's "Other queues"
// block, compiled and run by go test.
//
// asynq (github.com/hibiken/asynq) needs Redis and gue
// (github.com/vgarvardt/gue/v5) its own tables and worker pool; neither is a
// dependency of twicekit. The example declares small local types with the
// same shapes as theirs (asynq's *Task with Type and Payload and its
// SkipRetry error; gue's *Job with Tx()), so the handlers read as they do
// against the real libraries.
package otherqueues
