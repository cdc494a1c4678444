package twiceasynq

import (
	"reflect"
	"strings"
	"time"
	"unsafe"

	"github.com/hibiken/asynq"
)

// The defaults of asynq's client (client.go: defaultMaxRetry,
// defaultTimeout) and its default queue.
const (
	defaultMaxRetry = 25
	defaultTimeout  = 30 * time.Minute
	defaultQueue    = "default"
)

// settings are the task's options as asynq's client composes them: the
// task's own, then Enqueue's, the last of each kind winning.
type settings struct {
	maxRetry  int
	queue     string
	taskID    string // "": asynq makes one per enqueue
	timeout   time.Duration
	deadline  time.Time
	uniqueTTL time.Duration
	retention time.Duration
	processIn time.Duration
	processAt time.Time
	group     string
	// invalid is why asynq's client refuses the options ("" when it
	// takes them), in its words.
	invalid string
}

func composeOptions(task *asynq.Task, enqueue []asynq.Option) settings {
	s := settings{maxRetry: defaultMaxRetry, queue: defaultQueue}
	for _, o := range append(taskOptions(task), enqueue...) {
		switch v := o.Value().(type) {
		case int:
			if o.Type() == asynq.MaxRetryOpt {
				s.maxRetry = max(v, 0)
			}
		case string:
			blank := strings.TrimSpace(v) == ""
			switch o.Type() {
			case asynq.QueueOpt:
				s.queue = v
				if blank {
					s.invalid = "queue name must contain one or more characters"
				}
			case asynq.TaskIDOpt:
				s.taskID = v
				if blank {
					s.invalid = "task ID cannot be empty"
				}
			case asynq.GroupOpt:
				s.group = v
				if blank {
					s.invalid = "group key cannot be empty"
				}
			}
		case time.Duration:
			switch o.Type() {
			case asynq.TimeoutOpt:
				s.timeout = v
			case asynq.UniqueOpt:
				s.uniqueTTL = v
				if v < time.Second {
					s.invalid = "Unique TTL cannot be less than 1s"
				}
			case asynq.RetentionOpt:
				s.retention = v
			case asynq.ProcessInOpt:
				s.processIn, s.processAt = v, time.Time{}
			}
		case time.Time:
			switch o.Type() {
			case asynq.DeadlineOpt:
				s.deadline = v
			case asynq.ProcessAtOpt:
				s.processAt, s.processIn = v, 0
			}
		}
	}
	if s.timeout == 0 && s.deadline.IsZero() {
		s.timeout = defaultTimeout
	}
	return s
}

// taskOptions are the options given to asynq.NewTask. asynq keeps them in
// the task's unexported opts field and offers no accessor; they are read
// with reflection (TestTaskOptionsAreRead pins it). An asynq whose Task
// keeps them otherwise yields none: pass them as Job.Options then.
func taskOptions(task *asynq.Task) []asynq.Option {
	if task == nil {
		return nil
	}
	f := reflect.ValueOf(task).Elem().FieldByName("opts")
	if !f.IsValid() || f.Type() != reflect.TypeFor[[]asynq.Option]() {
		return nil
	}
	opts := *(*[]asynq.Option)(unsafe.Pointer(f.UnsafeAddr()))
	return append([]asynq.Option(nil), opts...)
}
