package twiceasynq

import (
	"maps"
	"reflect"
	"unsafe"

	"github.com/hibiken/asynq"
)

// Task headers came with asynq v0.26.0 (asynq.NewTaskWithHeaders,
// Task.Headers, TaskInfo.Headers); twiceasynq supports older releases
// too, so it reaches them without naming them: an interface assertion for
// Task.Headers, reflection for the task's headers field and TaskInfo's
// Headers field. On a release without headers a task has none, and the
// check's tasks carry none (TestHeadersReachTheHandler pins both).

// headersSupported reports whether this asynq's tasks carry headers.
var headersSupported = func() bool {
	_, ok := any(asynq.NewTask("", nil)).(interface{ Headers() map[string]string })
	return ok
}()

// taskHeaders is t.Headers() on an asynq that has it, else nil.
func taskHeaders(t *asynq.Task) map[string]string {
	if h, ok := any(t).(interface{ Headers() map[string]string }); ok && t != nil {
		return h.Headers()
	}
	return nil
}

// newTask is asynq.NewTaskWithHeaders(typ, payload, headers, opts...) on
// an asynq that has headers, else asynq.NewTask(typ, payload, opts...).
func newTask(typ string, payload []byte, headers map[string]string, opts ...asynq.Option) *asynq.Task {
	t := asynq.NewTask(typ, payload, opts...)
	if headers == nil {
		return t
	}
	f := reflect.ValueOf(t).Elem().FieldByName("headers")
	if f.IsValid() && f.Type() == reflect.TypeFor[map[string]string]() {
		*(*map[string]string)(unsafe.Pointer(f.UnsafeAddr())) = maps.Clone(headers)
	}
	return t
}

// setInfoHeaders sets info.Headers on an asynq whose TaskInfo has them.
func setInfoHeaders(info *asynq.TaskInfo, headers map[string]string) {
	f := reflect.ValueOf(info).Elem().FieldByName("Headers")
	if f.IsValid() && f.Type() == reflect.TypeFor[map[string]string]() {
		f.Set(reflect.ValueOf(headers))
	}
}
