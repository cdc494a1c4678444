package smtpserver

import (
	"errors"
	"net"
	"net/smtp"
	"testing"

	"github.com/stretchr/testify/require"
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

// serveOne serves one connection on a loopback listener with deliver and
// returns its address; the server ends with the test.
func serveOne(t *testing.T, deliver func(Message) error) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		Serve(conn, deliver)
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
	})
	return ln.Addr().String()
}

// Serve hands deliver the envelope and what a reader sees; deliver's nil is
// a 250, a Refusal a 451 with its text, another error a connection closed
// with no reply.
func TestServe(t *testing.T) {
	raw := []byte("Subject: =?UTF-8?Q?Re=C3=A7u?=\r\n\r\nThanks\r\n")
	var got []Message
	addr := serveOne(t, func(m Message) error { got = append(got, m); return nil })
	require.NoError(t, smtp.SendMail(addr, nil, "shop@example.com", []string{"ann@example.com", "bob@example.com"}, raw))
	require.Equal(t, []Message{{From: "shop@example.com", To: []string{"ann@example.com", "bob@example.com"}, Subject: "Reçu", Body: "Thanks"}}, got)

	addr = serveOne(t, func(Message) error { return &Refusal{Text: "not now"} })
	err := smtp.SendMail(addr, nil, "shop@example.com", []string{"ann@example.com"}, raw)
	require.ErrorContains(t, err, "451")
	require.ErrorContains(t, err, "not now")

	addr = serveOne(t, func(Message) error { return errors.New("gone") })
	err = smtp.SendMail(addr, nil, "shop@example.com", []string{"ann@example.com"}, raw)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "gone")
	require.NotContains(t, err.Error(), "451")

	called := false
	addr = serveOne(t, func(Message) error { called = true; return nil })
	err = smtp.SendMail(addr, nil, "shop@example.com", []string{"ann@example.com"}, []byte("no header line\r\n"))
	require.ErrorContains(t, err, "554")
	require.False(t, called)
}
