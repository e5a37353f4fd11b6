package protocol

import (
	"sync/atomic"
	"unsafe"

	"github.com/go-json-experiment/json/jsontext"
)

// Text is an immutable string that grows by appending in amortized time
// proportional to the appended part, while every earlier value stays valid.
//
// Streaming turns append thousands of small chunks to one response part.
// With plain strings each append copies everything before it, so a long
// answer costs quadratic time. Text values share one append-only buffer:
// appending to the newest value writes past its end in place; appending to
// an older value (whose end is no longer the buffer's end) copies first.
// Values are safe for concurrent use: the claim on a buffer's tail is an
// atomic compare-and-swap, and bytes are never changed once written.
//
// The zero value is the empty text.
type Text struct {
	b    []byte
	tail *atomic.Int64 // length of the longest Text sharing b's array
}

// TextOf returns a Text holding s.
func TextOf(s string) Text {
	if s == "" {
		return Text{}
	}
	t := Text{b: []byte(s), tail: new(atomic.Int64)}
	t.tail.Store(int64(len(t.b)))
	return t
}

// Append returns t followed by s. t itself is unchanged.
func (t Text) Append(s string) Text {
	if s == "" {
		return t
	}
	n := len(t.b)
	if t.tail != nil && cap(t.b)-n >= len(s) && t.tail.CompareAndSwap(int64(n), int64(n+len(s))) {
		// t is the newest value of this buffer and there is room: write in place.
		return Text{b: append(t.b, s...), tail: t.tail}
	}
	// Copy into a new buffer with room to grow.
	nb := make([]byte, n+len(s), max(2*(n+len(s)), 64))
	copy(nb, t.b)
	copy(nb[n:], s)
	tail := new(atomic.Int64)
	tail.Store(int64(len(nb)))
	return Text{b: nb, tail: tail}
}

// Len returns the length in bytes.
func (t Text) Len() int { return len(t.b) }

// String returns the text. It does not copy: the bytes are never modified.
func (t Text) String() string {
	if len(t.b) == 0 {
		return ""
	}
	return unsafe.String(&t.b[0], len(t.b))
}

// Equal reports whether two texts hold the same string.
func (t Text) Equal(u Text) bool { return t.String() == u.String() }

// MarshalJSONTo writes the text as a JSON string.
func (t Text) MarshalJSONTo(enc *jsontext.Encoder) error {
	return writeString(enc, t.String())
}

// UnmarshalJSONFrom reads a JSON string.
func (t *Text) UnmarshalJSONFrom(dec *jsontext.Decoder) error { return t.decodeJSON(dec) }

func (t *Text) decodeJSON(dec *jsontext.Decoder) error {
	s, err := readString(dec)
	if err != nil {
		return err
	}
	*t = TextOf(s)
	return nil
}
