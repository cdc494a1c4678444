package sessions

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type mine struct {
	PID             int
	ApplicationName string
	ClientAddr      string
}

func TestMergeAddsTheSessionsMissingByPID(t *testing.T) {
	a := []mine{{PID: 1, ApplicationName: "a"}}
	got := Merge(a, []mine{{PID: 1, ApplicationName: "other"}, {PID: 2}, {PID: 2, ClientAddr: "x"}})
	require.Equal(t, []mine{{PID: 1, ApplicationName: "a"}, {PID: 2}}, got)
	require.Nil(t, Merge[mine](nil, nil))
}

func TestAsAndFromKeepNilAndTheFields(t *testing.T) {
	require.Nil(t, As[mine](nil))
	require.Nil(t, From[mine](nil))
	ss := []Session{{PID: 7, ApplicationName: "app", ClientAddr: "10.0.0.1"}}
	require.Equal(t, []mine{{PID: 7, ApplicationName: "app", ClientAddr: "10.0.0.1"}}, As[mine](ss))
	require.Equal(t, ss, From(As[mine](ss)))
}
