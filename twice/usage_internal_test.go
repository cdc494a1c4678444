package twice

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCountAgreesWithItsNoun(t *testing.T) {
	require.Equal(t, "0 points", count(0, "point"))
	require.Equal(t, "1 point", count(1, "point"))
	require.Equal(t, "2 points", count(2, "point"))
	require.Equal(t, "1 delivery", count(1, "delivery"))
	require.Equal(t, "5 deliveries", count(5, "delivery"))
	require.Equal(t, "2 keys", count(2, "key"))
}
