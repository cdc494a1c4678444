// Package smtpserver serves SMTP on one connection with go-smtp and hands
// each message to its caller as a reader sees it: the envelope, the decoded
// Subject, and the body decoded from its transfer encoding (the first
// text/plain part of a multipart message). twice's a.SMTP stands on it.
package smtpserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
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
)

// domain is the name the server greets with.
const domain = "smtp.twice.test"

// maxMessage is the largest message the server accepts.
const maxMessage = 16 << 20

// Message is one message a client sent: its envelope, and what a reader
// sees of it.
type Message struct {
	// From is the sender (MAIL FROM), "" for the null sender.
	From string
	// To lists the recipients (RCPT TO), in the order given.
	To []string
	// Subject is the Subject header, decoded from RFC 2047.
	Subject string
	// Body is the body as a reader sees it: its Content-Transfer-Encoding
	// (quoted-printable, base64) decoded, the first text/plain part of a
	// multipart message (a MIME boundary differs on every run), CRLF as
	// "\n", without trailing newlines.
	Body string
}

// Refusal is an error of deliver that refuses the message: the client gets
// an SMTP 451 reply with Text, and the connection stays open.
type Refusal struct{ Text string }

func (r *Refusal) Error() string { return r.Text }

// Serve serves SMTP on conn until it closes, accepting AUTH PLAIN with any
// credentials so that a mailer configured with a user and password sends as
// it does in production.
// deliver is called on each message's DATA.
// Its nil accepts the message (250); a *Refusal refuses it (451); any other
// error closes the connection without a reply, as a server that died after
// it took the message.
// A message that does not parse as an RFC 5322 message is refused (554)
// before deliver sees it.
func Serve(conn net.Conn, deliver func(Message) error) {
	one := &oneConn{Conn: conn, closed: make(chan struct{})}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &session{deliver: deliver, conn: one}, nil
	}))
	srv.Domain = domain
	srv.AllowInsecureAuth = true // the attempt's server speaks plain SMTP on loopback
	srv.MaxMessageBytes = maxMessage
	srv.ErrorLog = discardLogger{}
	ln := &oneConnListener{conn: one, done: make(chan struct{})}
	_ = srv.Serve(ln)                      // returns once the connection closed
	_ = srv.Shutdown(context.Background()) // waits for go-smtp's goroutine of the connection
}

// session is one SMTP session: the envelope of the message under way.
type session struct {
	deliver func(Message) error
	conn    net.Conn
	from    string
	to      []string
}

func (s *session) Reset()        { s.from, s.to = "", nil }
func (s *session) Logout() error { return nil }

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = append(s.to, to)
	return nil
}

// AuthMechanisms accepts AUTH PLAIN with any credentials.
func (s *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (s *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(string, string, string) error { return nil }), nil
}

// Data reads the message and hands it to deliver.
func (s *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	subject, body, err := readEmail(raw)
	if err != nil {
		return &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 6, 0},
			Message: "twice: the message does not parse as an RFC 5322 message: " + err.Error()}
	}
	err = s.deliver(Message{From: s.from, To: s.to, Subject: subject, Body: body})
	var refusal *Refusal
	switch {
	case err == nil:
		return nil
	case errors.As(err, &refusal):
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: refusal.Text}
	}
	_ = s.conn.Close()
	return err
}

// readEmail is a message's Subject and body, as Message says.
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
