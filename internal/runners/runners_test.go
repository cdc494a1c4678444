package runners

import "testing"

func TestTheSchedulerSaysItsOwnWords(t *testing.T) {
	h := "not idempotent: crash before point 2 of 3, then redelivery"
	if got := LeaseQueue.Words(h); got != h {
		t.Errorf("a queue keeps its words: %s", got)
	}
	if got, want := InProcessScheduler.Words(h), "not idempotent: the process died before point 2 of 3, then the next scheduled run"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	for k, want := range map[Kind]string{LeaseQueue: "lease queue", LockingConsumer: "locking consumer", InProcessScheduler: "in-process scheduler"} {
		if k.String() != want {
			t.Errorf("%d: %s", k, k)
		}
	}
}
