package twice

import (
	"net/smtp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/checkstate"
	"github.com/twicekit/twicekit/internal/fakeserve"
	"github.com/twicekit/twicekit/internal/inject"
)

// Mail sent while no attempt runs on the server's worker is refused with an
// SMTP error, recorded as a call that bypassed the handles, and not sent.
func TestSMTPBetweenAttemptsIsRefusedAsForeign(t *testing.T) {
	c := &checker{}
	log := effects.NewLog()
	trouble := &fakeserve.Trouble{}
	f := checkstate.NewFakeServers(c.gate(inject.NewOwner(nil)), log, trouble)
	defer f.Close()
	addr, err := f.Listen("a.SMTP", fakeserve.ServeSMTP)
	require.NoError(t, err)
	err = smtp.SendMail(addr, nil, "shop@example.com", []string{"ann@example.com"}, []byte("Subject: Hi\r\n\r\nThanks\r\n"))
	require.ErrorContains(t, err, "451")
	require.ErrorContains(t, err, "no attempt runs on this server's worker")
	require.Equal(t, []string{"email to ann@example.com: Hi (from shop@example.com)"}, c.Foreign)
	require.Zero(t, log.Len())
	require.NoError(t, trouble.Err())
}
