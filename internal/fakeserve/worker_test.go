package fakeserve

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
)

// A name no ServeFake option serves is the check's trouble, once, and its
// address refuses every connection.
func TestAnUnknownFakeIsTrouble(t *testing.T) {
	trouble := &Trouble{}
	w := NewWorker(nil, effects.NewLog(), trouble, time.Second)
	defer w.Close()
	require.NoError(t, w.Serve([]Fake{{Name: "sms", Serve: func(net.Conn, *Handles) {}}}, func(err error) error { return err }))
	require.NotEmpty(t, w.SMTP)
	require.NotEqual(t, RefusedAddr, w.Addr("sms"))
	require.Equal(t, RefusedAddr, w.Addr("push"))
	require.Equal(t, RefusedAddr, w.Addr("push"))
	require.EqualError(t, trouble.Err(), `twice: a.FakeAddr("push"): no fake of that name is served (served: "sms"): pass twice.ServeFake("push", serve) to the check`)
	require.Equal(t, RefusedAddr, (*Worker)(nil).Addr("sms"))
}

// The options' mistakes are the user's.
func TestServeFakesMistakes(t *testing.T) {
	type mine struct{ error }
	for _, c := range []struct {
		fakes []Fake
		err   string
	}{
		{[]Fake{{Serve: func(net.Conn, *Handles) {}}}, "twice: ServeFake: the fake needs a name (the one the job passes to a.FakeAddr)"},
		{[]Fake{{Name: "sms"}}, `twice: ServeFake("sms"): serve is nil: pass the function that serves one connection`},
		{[]Fake{{Name: "sms", Serve: func(net.Conn, *Handles) {}}, {Name: "sms", Serve: func(net.Conn, *Handles) {}}}, `twice: ServeFake("sms") is given twice: give each fake one name`},
	} {
		w := NewWorker(nil, effects.NewLog(), nil, time.Second)
		err := w.Serve(c.fakes, func(err error) error { return mine{err} })
		w.Close()
		require.IsType(t, mine{}, err)
		require.EqualError(t, err, c.err)
	}
}

// Handles a check did not make refuse effects and never end.
func TestNilHandles(t *testing.T) {
	var h *Handles
	require.Equal(t, context.Background(), h.Context())
	require.ErrorContains(t, h.Effect(context.Background(), "sms", "+15550100", "hi", nil), "use the *FakeConn a ServeFake serve function is given")
	require.NoError(t, (*Trouble)(nil).Err())
}
