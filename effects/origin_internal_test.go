package effects

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOriginHeader(t *testing.T) {
	o := Origin{JobID: "job;with=odd chars", Attempt: 3, Point: 12}
	s := formatOrigin(o)
	assert.Equal(t, "job=job%3Bwith%3Dodd+chars;attempt=3;point=12", s)
	back, err := parseOrigin(s)
	require.NoError(t, err)
	assert.Equal(t, o, back)
	zero, err := parseOrigin("")
	require.NoError(t, err)
	assert.True(t, zero.IsZero())
	for _, bad := range []string{"job=1", "job=1;attempt=1;point=1;x=2", "job=1;attempt=1;attempt=2", "junk", "job=%zz;attempt=1;point=1"} {
		_, err := parseOrigin(bad)
		assert.Error(t, err, bad)
	}
}
