package checkrun

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNameUnseenStopsAtTheFirstRunThatSawASession(t *testing.T) {
	runs := 0
	got := NameUnseen(10, func() ([]int, error) {
		runs++
		if runs == 3 {
			return []int{42}, nil
		}
		return nil, nil
	})
	require.Equal(t, []int{42}, got)
	require.Equal(t, 3, runs)
}

func TestNameUnseenGivesUpAfterTriesOrAFailedRun(t *testing.T) {
	runs := 0
	require.Nil(t, NameUnseen(4, func() ([]int, error) { runs++; return nil, nil }))
	require.Equal(t, 4, runs)
	runs = 0
	require.Nil(t, NameUnseen(4, func() ([]int, error) { runs++; return nil, errors.New("no") }))
	require.Equal(t, 1, runs)
}
