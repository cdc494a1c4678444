package twice

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/faults"
)

// The SMTP server behind Attempt.SMTP: a fake of every worker (fakeserver.go)
// whose connections go-smtp serves. One message is one point of the attempt
// (its DATA) and one email effect per recipient, as a.Mailer records them:
// Kind "email", Key the recipient, Payload the subject, plus "\n" and the
// body when there is one.
//
// The sender (MAIL FROM) is in the point's label, on the timeline, after
// what a.Mailer's label says ("email to ann@example.com: Your receipt (from
// shop@example.com)"), and not in the Key or the Payload: a.Mailer's emails have no sender, so the same email
// sent through either compares as the same effect, under the same email
// policies and in the same words.
//
// The body is what a reader sees: its Content-Transfer-Encoding
// (quoted-printable, base64) decoded, the first text/plain part of a
// multipart message (a MIME boundary differs on every run), CRLF as "\n",
// without trailing newlines. The Subject is decoded from RFC 2047.

// smtpDomain is the name the server greets with.
const smtpDomain = "smtp.twice.test"

// smtpMaxMessage is the largest message the server accepts.
const smtpMaxMessage = 16 << 20

// serveSMTP serves SMTP on one connection of a worker's fake.
func serveSMTP(fc *FakeConn) {
	conn := &oneConn{Conn: fc.Conn, closed: make(chan struct{})}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &smtpSession{fc: fc, conn: conn}, nil
	}))
	srv.Domain = smtpDomain
	srv.AllowInsecureAuth = true // the attempt's server speaks plain SMTP on loopback
	srv.MaxMessageBytes = smtpMaxMessage
	srv.ErrorLog = discardLogger{}
	ln := &oneConnListener{conn: conn, done: make(chan struct{})}
	_ = srv.Serve(ln)                      // returns once the connection closed
	_ = srv.Shutdown(context.Background()) // waits for go-smtp's goroutine of the connection
}

// smtpSession is one SMTP session: the envelope of the message under way.
type smtpSession struct {
	fc   *FakeConn
	conn net.Conn
	from string
	to   []string
}

func (s *smtpSession) Reset()        { s.from, s.to = "", nil }
func (s *smtpSession) Logout() error { return nil }

func (s *smtpSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}

func (s *smtpSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

// AuthMechanisms accepts AUTH PLAIN with any credentials, so that a mailer
// configured with a user and password sends as it does in production.
func (s *smtpSession) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *smtpSession) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(string, string, string) error { return nil }), nil
}

// Data is the message's point. A refused point (the attempt crashed before
// it, or no attempt runs on the worker) answers with an SMTP error and
// records nothing; once the message was recorded, an error (the attempt
// died after it, or its reply was lost) closes the connection without the
// 250, as a server that died after accepting it.
func (s *smtpSession) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	subject, body, err := readEmail(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0},
			Message: "twice: the message does not parse as an RFC 5322 message: " + err.Error()}
	}
	payload := subject
	if body != "" {
		payload += "\n" + body
	}
	from := s.from
	if from == "" {
		from = "<>"
	}
	call := effects.Call{Kind: effects.KindEmail, Label: fmt.Sprintf("email to %s: %s (from %s)", strings.Join(s.to, ", "), subject, from)}
	applied, err := s.fc.applyAll(s.fc.Context(), call, func(o effects.Origin) {
		for _, to := range s.to {
			s.fc.log.Append(effects.Effect{Kind: effects.KindEmail, Key: to, Payload: payload, Origin: o})
		}
	})
	switch {
	case err == nil:
		return nil
	case applied:
		_ = s.conn.Close()
		return err
	}
	msg := "twice: the attempt crashed before this message: nothing was sent"
	switch {
	case errors.Is(err, faults.ErrForeignContext):
		msg = "twice: no attempt runs on this server's worker: the message was refused, nothing was sent"
	case errors.Is(err, faults.ErrFinished):
		msg = "twice: the attempt had returned: the message was refused, nothing was sent"
	}
	return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: msg}
}

// readEmail is a message's Subject and body, as the doc comment above
// says.
func readEmail(raw []byte) (subject, body string, err error) {
	m, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return "", "", err
	}
	dec := new(mime.WordDecoder)
	subject = m.Header.Get("Subject")
	if s, err := dec.DecodeHeader(subject); err == nil {
		subject = s
	}
	b, err := readPart(m.Header.Get("Content-Type"), m.Header.Get("Content-Transfer-Encoding"), m.Body)
	if err != nil {
		return "", "", err
	}
	body = strings.ReplaceAll(string(b), "\r\n", "\n")
	return subject, strings.TrimRight(body, "\n"), nil
}

// readPart is what a reader sees of a part: decoded, and for a multipart
// its first text/plain part (else its first part).
func readPart(contentType, encoding string, r io.Reader) ([]byte, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err == nil && strings.HasPrefix(mt, "multipart/") && params["boundary"] != "" {
		mr := multipart.NewReader(r, params["boundary"])
		var first []byte
		for i := 0; ; i++ {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				return first, nil
			}
			if err != nil {
				return nil, err
			}
			ct := p.Header.Get("Content-Type")
			b, err := readPart(ct, p.Header.Get("Content-Transfer-Encoding"), p)
			if err != nil {
				return nil, err
			}
			if pt, _, _ := mime.ParseMediaType(ct); pt == "text/plain" || (ct == "" && !strings.HasPrefix(pt, "multipart/")) {
				return b, nil
			}
			if i == 0 {
				first = b
			}
		}
	}
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, &newlineSkipper{r: r})
	}
	return io.ReadAll(r)
}

// newlineSkipper drops the line breaks of a base64 body.
type newlineSkipper struct{ r io.Reader }

func (n *newlineSkipper) Read(p []byte) (int, error) {
	for {
		k, err := n.r.Read(p)
		j := 0
		for _, c := range p[:k] {
			if c != '\r' && c != '\n' {
				p[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}

// applyAll makes one point of the attempt that records several effects
// (a message to several recipients): the gate's Before, record, the gate's
// After. applied says whether record ran.
func (c *FakeConn) applyAll(ctx context.Context, call effects.Call, record func(effects.Origin)) (applied bool, err error) {
	if c.gate == nil {
		return false, errors.New("twice: a connection the check did not make")
	}
	o, err := c.gate.Before(ctx, call)
	if err != nil {
		return false, err
	}
	record(o)
	return true, c.gate.After(ctx, call)
}

// oneConn is the connection go-smtp serves; closed is closed with it.
type oneConn struct {
	net.Conn
	once   sync.Once
	closed chan struct{}
}

func (c *oneConn) Close() error {
	c.once.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

// oneConnListener hands go-smtp's Server one connection, then ends once
// that connection closed (or the listener did).
type oneConnListener struct {
	conn   *oneConn
	mu     sync.Mutex
	handed bool
	once   sync.Once
	done   chan struct{}
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if !l.handed {
		l.handed = true
		l.mu.Unlock()
		return l.conn, nil
	}
	l.mu.Unlock()
	select {
	case <-l.conn.closed:
	case <-l.done:
	}
	return nil, net.ErrClosed
}

func (l *oneConnListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return l.conn.LocalAddr() }

// discardLogger keeps go-smtp's connection errors (a client that hung up)
// out of the test's output.
type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}
func (discardLogger) Println(...any)        {}
