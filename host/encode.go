package host

import (
	"bytes"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host/internal/replay"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// Messages are encoded once and the same bytes are queued to every
// recipient.

const actionPrefix = `{"jsonrpc":"2.0","method":"action","params":`

// encodeAction returns the "action" notification for env and the slice of
// it that holds the envelope alone. The result is one allocation of the
// exact size; the encoding runs on a pooled encoder.
func encodeAction(env *protocol.ActionEnvelope) (msg []byte, envelope jsontext.Value, err error) {
	e := actionEncoders.Get().(*actionEncoder)
	defer e.release()
	e.buf.Reset()
	e.buf.WriteString(actionPrefix)
	// Generated encoders write each member once, so the encoder need not
	// track names to refuse duplicates.
	e.enc.Reset(&e.buf, jsontext.AllowDuplicateNames(true))
	if err := env.MarshalJSONTo(&e.enc); err != nil {
		return nil, nil, err
	}
	out := bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")) // the encoder ends a top-level value with one
	msg = make([]byte, len(out)+1)
	copy(msg, out)
	msg[len(out)] = '}'
	return msg, msg[len(actionPrefix):len(out)], nil
}

// actionEncoder is a reusable encoder with its buffer.
type actionEncoder struct {
	buf bytes.Buffer
	enc jsontext.Encoder
}

var actionEncoders = sync.Pool{New: func() any { return new(actionEncoder) }}

// maxPooledEncoder is the largest buffer kept for reuse; an encoder that
// grew past it for a large action is left to the collector. Streamed
// terminal output comes in actions of up to 64 KiB of data, which with
// their escapes take a buffer of a little more: those are kept.
const maxPooledEncoder = 256 << 10

func (e *actionEncoder) release() {
	if e.buf.Cap() > maxPooledEncoder {
		return
	}
	e.enc.Reset(discard{}) // drop the alias of buf
	actionEncoders.Put(e)
}

// discard is an io.Writer that drops what it is given.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// encodeNotification returns a JSON-RPC notification.
func encodeNotification(method string, params any) ([]byte, error) {
	body, err := protocol.Marshal(params)
	if err != nil {
		return nil, err
	}
	msg := make([]byte, 0, len(body)+len(method)+40)
	msg = append(msg, `{"jsonrpc":"2.0","method":`...)
	msg, _ = jsontext.AppendQuote(msg, method)
	msg = append(msg, `,"params":`...)
	msg = append(msg, body...)
	msg = append(msg, '}')
	return msg, nil
}

// privateEnvelope encodes an action envelope meant for one connection only
// (a rejection echo, or a page of older turns). It takes a serverSeq of its
// own, which only that connection sees: Snapshot.fromSeq promises that
// what follows a snapshot carries a higher serverSeq, so a client may drop
// anything at or below what it has seen. The envelope is not replayed.
//
// The action is shown as v, the recipient's version, sees it.
func (h *Host) privateEnvelope(v *view.View, channel string, action protocol.StateAction, origin *protocol.ActionOrigin, rejection string) []byte {
	seq := h.nextSeqLocked()
	h.jr.Queue(seq)
	env := protocol.ActionEnvelope{Channel: channel, Action: v.Action(action), ServerSeq: seq, Origin: origin}
	if rejection != "" {
		env.RejectionReason = &rejection
	}
	msg, _, err := encodeAction(&env)
	if err != nil {
		h.log.Error("encoding an action failed", "channel", channel, "err", err)
		return nil
	}
	return msg
}

// replayedLocked returns a replay log entry as c's version sees it: the
// bytes kept when its shapes are the current ones or the action did not
// change, a fresh encoding otherwise.
func (c *conn) replayedLocked(e replay.Entry) rawEnvelope {
	if !c.view.Legacy() {
		return rawEnvelope(e.Envelope)
	}
	env := c.view.Envelope(&e.Env)
	if env == &e.Env {
		return rawEnvelope(e.Envelope)
	}
	body, err := protocol.Marshal(env)
	if err != nil {
		c.h.log.Error("encoding an action failed", "channel", e.Channel, "err", err)
		return rawEnvelope(e.Envelope)
	}
	return rawEnvelope(body)
}

// rawEnvelope is an already encoded ActionEnvelope.
type rawEnvelope jsontext.Value

func (r rawEnvelope) MarshalJSONTo(enc *jsontext.Encoder) error {
	return enc.WriteValue(jsontext.Value(r))
}

// replayResult is the replay form of the reconnect result, built from the
// envelopes kept in the replay log without decoding them.
type replayResult struct {
	Actions []rawEnvelope `json:"actions"`
	Missing []string      `json:"missing"`
}

func (r *replayResult) MarshalJSONTo(enc *jsontext.Encoder) error {
	if err := enc.WriteToken(jsontext.BeginObject); err != nil {
		return err
	}
	enc.WriteToken(jsontext.String("type"))
	enc.WriteToken(jsontext.String("replay"))
	enc.WriteToken(jsontext.String("actions"))
	enc.WriteToken(jsontext.BeginArray)
	for _, a := range r.Actions {
		if err := a.MarshalJSONTo(enc); err != nil {
			return err
		}
	}
	enc.WriteToken(jsontext.EndArray)
	enc.WriteToken(jsontext.String("missing"))
	enc.WriteToken(jsontext.BeginArray)
	for _, m := range r.Missing {
		enc.WriteToken(jsontext.String(m))
	}
	enc.WriteToken(jsontext.EndArray)
	return enc.WriteToken(jsontext.EndObject)
}
