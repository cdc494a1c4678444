// Package otherqueues checks jobs of queues other than River, with the real
// libraries: an asynq handler (github.com/hibiken/asynq) through package
// twiceasynq and a gue work function (github.com/vgarvardt/gue/v5) through
// package twicegue, each in a broken form the check flags and a fixed twin
// that passes; and a queue nobody wrote an adapter for (the application's
// own jobs table), checked with twice's generic queue options.
//
// The code between the "docs:begin" and "docs:end" lines of its test files
// is docs/queues.md's blocks; TestDocsShowTheCompiledCode keeps them equal.
package otherqueues
