package fakeserve

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/twicekit/twicekit/effects"
	"github.com/twicekit/twicekit/internal/inject"
	"github.com/twicekit/twicekit/internal/smtpserver"
)

// The SMTP server behind Attempt.SMTP: a fake of every worker (Worker.Serve)
// whose connections internal/smtpserver serves. One message is one point of
// the attempt (its DATA) and one email effect per recipient, as a.Mailer
// records them: Kind "email", Key the recipient, Payload the subject, plus
// "\n" and the body when there is one. The body is what a reader sees
// (smtpserver.Message).
//
// The sender (MAIL FROM) is in the point's label, on the timeline, after
// what a.Mailer's label says ("email to ann@example.com: Your receipt (from
// shop@example.com)"), and not in the Key or the Payload: a.Mailer's emails have no sender, so the same email
// sent through either compares as the same effect, under the same email
// policies and in the same words.

// ServeSMTP serves SMTP on one connection of a worker's fake.
func ServeSMTP(conn net.Conn, h *Handles) {
	smtpserver.Serve(conn, func(m smtpserver.Message) error { return h.sendEmail(m) })
}

// sendEmail is a message's point. A refused point (the attempt crashed
// before it, or no attempt runs on the worker) answers with an SMTP error
// and records nothing; once the message was recorded, an error (the attempt
// died after it, or its reply was lost) closes the connection without the
// 250, as a server that died after accepting it.
func (h *Handles) sendEmail(m smtpserver.Message) error {
	payload := m.Subject
	if m.Body != "" {
		payload += "\n" + m.Body
	}
	from := m.From
	if from == "" {
		from = "<>"
	}
	call := effects.Call{Kind: effects.KindEmail, Label: fmt.Sprintf("email to %s: %s (from %s)", strings.Join(m.To, ", "), m.Subject, from)}
	applied, err := h.applyAll(h.Context(), call, func(o effects.Origin) {
		for _, to := range m.To {
			h.log.Append(effects.Effect{Kind: effects.KindEmail, Key: to, Payload: payload, Origin: o})
		}
	})
	if err == nil || applied {
		return err
	}
	msg := "twice: the attempt crashed before this message: nothing was sent"
	switch {
	case errors.Is(err, inject.ErrForeignContext):
		msg = "twice: no attempt runs on this server's worker: the message was refused, nothing was sent"
	case errors.Is(err, inject.ErrFinished):
		msg = "twice: the attempt had returned: the message was refused, nothing was sent"
	}
	return &smtpserver.Refusal{Text: msg}
}

// applyAll makes one point of the attempt that records several effects
// (a message to several recipients): the gate's Before, record, the gate's
// After. applied says whether record ran.
func (h *Handles) applyAll(ctx context.Context, call effects.Call, record func(effects.Origin)) (applied bool, err error) {
	if h.gate == nil {
		return false, errors.New("twice: a connection the check did not make")
	}
	o, err := h.gate.Before(ctx, call)
	if err != nil {
		return false, err
	}
	record(o)
	return true, h.gate.After(ctx, call)
}
