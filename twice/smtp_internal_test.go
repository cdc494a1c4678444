package twice

import (
	"net/smtp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/inject"
)

// The body is what a reader sees, so that an email written by a mail
// library compares with the same email through a.Mailer.
func TestReadEmail(t *testing.T) {
	for _, c := range []struct {
		name, raw, subject, body string
	}{
		{"plain", "Subject: Hi\r\n\r\nLine one\r\nLine two\r\n\r\n", "Hi", "Line one\nLine two"},
		{"no body", "Subject: Hi\r\n\r\n", "Hi", ""},
		{"encoded subject", "Subject: =?UTF-8?Q?Re=C3=A7u?=\r\n\r\nx", "Reçu", "x"},
		{"quoted-printable", "Subject: Hi\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nMerci =C3=A0 vous, a long=\r\n line\r\n", "Hi", "Merci à vous, a long line"},
		{"base64", "Subject: Hi\r\nContent-Transfer-Encoding: base64\r\n\r\nVGhhbmtz\r\nIQ==\r\n", "Hi", "Thanks!"},
		{"multipart", "Subject: Hi\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"b1\"\r\n\r\n" +
			"--b1\r\nContent-Type: text/html\r\n\r\n<p>Thanks</p>\r\n" +
			"--b1\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nThanks =E2=80=94 Ann\r\n" +
			"--b1--\r\n", "Hi", "Thanks — Ann"},
	} {
		subject, body, err := readEmail([]byte(c.raw))
		require.NoError(t, err, c.name)
		require.Equal(t, c.subject, subject, c.name)
		require.Equal(t, c.body, body, c.name)
	}
	_, _, err := readEmail([]byte("no header line\r\n"))
	require.Error(t, err)
}

// Mail sent while no attempt runs on the server's worker is refused with an
// SMTP error, recorded as a call that bypassed the handles, and not sent.
func TestSMTPBetweenAttemptsIsRefusedAsForeign(t *testing.T) {
	c := &checker{}
	log := effects.NewLog()
	f := newFakeServers(gate{c: c, owner: inject.NewOwner(nil)}, log, &fakeTrouble{})
	defer f.close()
	addr, err := f.listen("a.SMTP", serveSMTP)
	require.NoError(t, err)
	err = smtp.SendMail(addr, nil, "shop@example.com", []string{"ann@example.com"}, []byte("Subject: Hi\r\n\r\nThanks\r\n"))
	require.ErrorContains(t, err, "451")
	require.ErrorContains(t, err, "no attempt runs on this server's worker")
	require.Equal(t, []string{"email to ann@example.com: Hi (from shop@example.com)"}, c.foreign)
	require.Zero(t, log.Len())
	require.NoError(t, f.trouble.err())
}
