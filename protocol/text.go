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
	b []byte
	// room is what the buffer has left past the end of the longest Text
	// sharing it, cap(b)-len(b) for that Text. Counted from the buffer's
	// end, it holds for Texts that start later in it too (see Suffix).
	room *atomic.Int64
}

// TextOf returns a Text holding s.
func TextOf(s string) Text {
	if s == "" {
		return Text{}
	}
	t := Text{b: []byte(s), room: new(atomic.Int64)}
	t.room.Store(int64(cap(t.b) - len(t.b)))
	return t
}

// Append returns t followed by s. t itself is unchanged.
func (t Text) Append(s string) Text {
	if s == "" {
		return t
	}
	n, room := len(t.b), cap(t.b)-len(t.b)
	if t.room != nil && room >= len(s) && t.room.CompareAndSwap(int64(room), int64(room-len(s))) {
		// t is the newest value of this buffer and there is room: write in place.
		return Text{b: append(t.b, s...), room: t.room}
	}
	// Copy into a new buffer with room to grow: double a small one; grow a
	// large one (a long streamed answer) by a quarter, as append does, so
	// that its unused room and the copy it leaves behind stay a fraction
	// of the text rather than as large as it.
	size := n + len(s)
	grow := size
	if size >= textGrowSlow {
		grow = size / 4
	}
	nb := make([]byte, size, max(size+grow, 64))
	copy(nb, t.b)
	copy(nb[n:], s)
	r := new(atomic.Int64)
	r.Store(int64(cap(nb) - len(nb)))
	return Text{b: nb, room: r}
}

// textGrowSlow is the size from which Append grows a buffer by a quarter
// rather than doubling it.
const textGrowSlow = 1 << 20

// Suffix returns the last n bytes of t (all of t when n is larger), in
// the same buffer and without a copy: appending to it goes on in place as
// it would for t. What is cut off stays in memory until a later append
// outgrows the buffer and copies what is kept into a new one, so a text
// trimmed this way again and again (a terminal's scrollback) costs one
// copy of what it keeps per buffer's worth of output.
func (t Text) Suffix(n int) Text {
	if n >= len(t.b) {
		return t
	}
	if n <= 0 {
		return Text{}
	}
	return Text{b: t.b[len(t.b)-n:], room: t.room}
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
