package twice

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
	"github.com/twicekit/twicekit/internal/checkstate"
	"github.com/twicekit/twicekit/internal/fakeserve"
	"github.com/twicekit/twicekit/internal/inject"
)

// A fake's call made while no attempt runs on its worker is refused, and
// recorded as a call that bypassed the attempt's handles.
func TestAFakesCallBetweenAttemptsIsRefusedAsForeign(t *testing.T) {
	c := &checker{}
	log := effects.NewLog()
	trouble := &fakeserve.Trouble{}
	f := checkstate.NewFakeServers(c.gate(inject.NewOwner(nil)), log, trouble)
	defer f.Close()
	got := make(chan error, 1)
	addr, err := f.Listen(`ServeFake("sms")`, fakeConns(func(fc *FakeConn) {
		line, _ := bufio.NewReader(fc).ReadString('\n')
		got <- fc.Effect(fc.Context(), "sms", "+15550100", line, nil)
	}))
	require.NoError(t, err)
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = fmt.Fprint(conn, "hello\n")
	require.NoError(t, err)
	err = <-got
	require.True(t, errors.Is(err, faults.ErrForeignContext), "%v", err)
	require.Equal(t, []string{`sms +15550100 "hello\n"`}, c.Foreign)
	require.Zero(t, log.Len())
	require.NoError(t, trouble.Err())
}

// A FakeConn the check did not make says so.
func TestAFakeConnNotMadeByACheck(t *testing.T) {
	err := (&FakeConn{}).Effect(context.Background(), "sms", "+15550100", "hi", nil)
	require.ErrorContains(t, err, "use the *FakeConn a ServeFake serve function is given")
	require.Equal(t, fakeserve.RefusedAddr, (&Attempt{}).FakeAddr("sms"))
}
