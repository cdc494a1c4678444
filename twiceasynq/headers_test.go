package twiceasynq

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"testing"

	"github.com/hibiken/asynq"

	"github.com/twicekit/twicekit/twice"
)

// asynqRelease is the minor version of the asynq this test was built with,
// told by what its API has (a test binary names no module versions), not
// by what headers.go and revoke.go look for: 26 when TaskInfo has Headers,
// 25 when Config has TaskCheckInterval, else 24.
func asynqRelease() int {
	switch {
	case reflect.ValueOf(asynq.TaskInfo{}).FieldByName("Headers").IsValid():
		return 26
	case reflect.ValueOf(asynq.Config{}).FieldByName("TaskCheckInterval").IsValid():
		return 25
	}
	return 24
}

// Headers reach the handler on an asynq that has them (v0.26.0 on), on
// every delivery and on a follow-up's TaskInfo; on an older asynq a task
// carries none, and the check runs the handler all the same.
func TestHeadersReachTheHandler(t *testing.T) {
	t.Parallel()
	want := map[string]string{"tenant": "acme"}
	if asynqRelease() < 26 {
		if headersSupported {
			t.Fatal("an asynq before v0.26.0 has task headers: headers.go's note is wrong")
		}
		want = nil
	} else if !headersSupported {
		t.Fatal("asynq v0.26.0 on has Task.Headers, but headers.go does not find it")
	}
	var mu sync.Mutex
	var seen []map[string]string
	task := newTask(rewardType, payload(9812), map[string]string{"tenant": "acme"}, asynq.TaskID("reward:9812"))
	if got := taskHeaders(task); !maps.Equal(got, want) {
		t.Fatalf("taskHeaders(newTask(...)) = %v, want %v", got, want)
	}
	rep := Check(t.Context(), Job{Schema: schema, Seed: seed, Task: task,
		Handler: func(a *twice.Attempt) asynq.Handler {
			return asynq.HandlerFunc(func(ctx context.Context, tk *asynq.Task) error {
				mu.Lock()
				seen = append(seen, taskHeaders(tk))
				mu.Unlock()
				return rewardOnce(a.Pool).ProcessTask(ctx, tk)
			})
		}})
	if !rep.OK() {
		t.Fatalf("the check failed:\n%s", rep)
	}
	if len(seen) == 0 {
		t.Fatal("the handler never ran")
	}
	for i, h := range seen {
		if !maps.Equal(h, want) {
			t.Fatalf("delivery %d saw headers %v, want %v", i+1, h, want)
		}
	}
	info := &asynq.TaskInfo{}
	setInfoHeaders(info, want)
	if got := fmt.Sprint(infoHeaders(info)); got != fmt.Sprint(want) {
		t.Fatalf("setInfoHeaders: TaskInfo's headers are %s, want %v", got, want)
	}
}

// infoHeaders is info.Headers on an asynq whose TaskInfo has them.
func infoHeaders(info *asynq.TaskInfo) map[string]string {
	m, _ := fieldByName(info, "Headers").(map[string]string)
	return m
}

// TestRevokeTaskIsAsynqs pins revoke.go: revokeTask is asynq.RevokeTask on
// an asynq that has it (v0.25.0 on), and nil before.
func TestRevokeTaskIsAsynqs(t *testing.T) {
	t.Parallel()
	if asynqRelease() < 25 {
		if revokeTask != nil || isRevoke(fmt.Errorf("x: %w", asynq.SkipRetry)) {
			t.Fatalf("an asynq before v0.25.0 has a RevokeTask: %v", revokeTask)
		}
		return
	}
	if revokeTask == nil || revokeTask.Error() != "revoke task" {
		t.Fatalf("revokeTask = %v, want asynq.RevokeTask (\"revoke task\")", revokeTask)
	}
	if !isRevoke(fmt.Errorf("order cancelled: %w", revokeTask)) || isRevoke(asynq.SkipRetry) || isRevoke(nil) {
		t.Fatal("isRevoke does not tell RevokeTask from the other errors")
	}
}

func fieldByName(v any, name string) any {
	f := reflect.ValueOf(v).Elem().FieldByName(name)
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}
