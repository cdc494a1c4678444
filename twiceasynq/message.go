package twiceasynq

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// taskMessage is a task as asynq's client writes it into Redis: its
// TaskMessage protobuf (internal/proto/asynq.proto), read field by field
// with protowire so that no asynq internals are needed and any release
// that keeps the field numbers decodes.
type taskMessage struct {
	Type      string
	Payload   []byte
	Headers   map[string]string // field 15, asynq v0.25 and later
	ID        string
	Queue     string
	Retry     int   // MaxRetry
	Timeout   int64 // seconds; 0: none
	Deadline  int64 // Unix seconds; 0: none
	UniqueKey string
	GroupKey  string
	Retention int64 // seconds
}

// The TaskMessage field numbers.
const (
	fieldType      = 1
	fieldPayload   = 2
	fieldID        = 3
	fieldQueue     = 4
	fieldRetry     = 5
	fieldTimeout   = 8
	fieldDeadline  = 9
	fieldUniqueKey = 10
	fieldRetention = 12
	fieldGroupKey  = 14
	fieldHeaders   = 15
)

// decodeTaskMessage decodes b as asynq's TaskMessage. It fails on bytes
// that are not a protobuf message, or one without a type and an ID: such
// an argument is not a task.
func decodeTaskMessage(b []byte) (taskMessage, error) {
	var m taskMessage
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return m, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return m, protowire.ParseError(n)
			}
			b = b[n:]
			switch num {
			case fieldType:
				m.Type = string(v)
			case fieldPayload:
				m.Payload = append([]byte(nil), v...)
			case fieldID:
				m.ID = string(v)
			case fieldQueue:
				m.Queue = string(v)
			case fieldUniqueKey:
				m.UniqueKey = string(v)
			case fieldGroupKey:
				m.GroupKey = string(v)
			case fieldHeaders:
				k, val, err := decodeHeader(v)
				if err != nil {
					return m, err
				}
				if m.Headers == nil {
					m.Headers = map[string]string{}
				}
				m.Headers[k] = val
			}
		case typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return m, protowire.ParseError(n)
			}
			b = b[n:]
			switch num {
			case fieldRetry:
				m.Retry = int(int32(v))
			case fieldTimeout:
				m.Timeout = int64(v)
			case fieldDeadline:
				m.Deadline = int64(v)
			case fieldRetention:
				m.Retention = int64(v)
			}
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return m, protowire.ParseError(n)
			}
			b = b[n:]
		}
	}
	if m.Type == "" || m.ID == "" {
		return m, errors.New("not a task message: no type or no ID")
	}
	return m, nil
}

// decodeHeader decodes one entry of the headers map: key 1, value 2.
func decodeHeader(b []byte) (key, value string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", "", protowire.ParseError(n)
		}
		b = b[n:]
		if typ != protowire.BytesType {
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return "", "", protowire.ParseError(n)
			}
			b = b[n:]
			continue
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return "", "", protowire.ParseError(n)
		}
		b = b[n:]
		switch num {
		case 1:
			key = string(v)
		case 2:
			value = string(v)
		}
	}
	if key == "" {
		return "", "", fmt.Errorf("a header entry without a key")
	}
	return key, value, nil
}
