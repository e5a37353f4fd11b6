package protocol

import (
	"slices"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/go-json-experiment/json"
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
// A text longer than a block (textBlock, 1 MiB) is kept as a list of full
// blocks and a tail buffer: appending never copies the blocks, so a long
// answer is never held twice while its buffer regrows, and older values
// (a snapshot waiting for the store) share every block with the newest.
//
// The zero value is the empty text.
type Text struct {
	b []byte
	// room counts what the buffer has left and holds the blocks before
	// it; nil for the empty text. (One pointer for both keeps a Text, and
	// the response parts holding one, as small as a single buffer needs.)
	room *textRoom
}

// textRoom is shared by the Texts that end in one buffer.
type textRoom struct {
	// left is what the buffer has left past the end of the longest Text
	// sharing it, cap(b)-len(b) for that Text. Counted from the buffer's
	// end, it holds for Texts that start later in it too (see Suffix).
	left atomic.Int64
	// shared, when set, is the textRoom whose left counts for this one:
	// a Suffix keeping fewer blocks before the same buffer.
	shared *textRoom
	// head holds the full blocks before the buffer; nil for a text of
	// one buffer.
	head *textHead
}

// counter returns the count of what the buffer has left.
func (r *textRoom) counter() *atomic.Int64 {
	if r.shared != nil {
		return &r.shared.left
	}
	return &r.left
}

// counterOwner returns the textRoom whose left counts for r.
func (r *textRoom) counterOwner() *textRoom {
	if r.shared != nil {
		return r.shared
	}
	return r
}

// head returns the blocks before t's buffer, nil for none.
func (t Text) head() *textHead {
	if t.room == nil {
		return nil
	}
	return t.room.head
}

// textHead is the immutable list of blocks before a long Text's tail.
type textHead struct {
	blocks [][]byte
	n      int // bytes in blocks
}

// textBlock is the size of the blocks a long Text is kept in.
const textBlock = 1 << 20

// TextOf returns a Text holding s.
func TextOf(s string) Text {
	if s == "" {
		return Text{}
	}
	t := Text{b: []byte(s), room: new(textRoom)}
	t.room.left.Store(int64(cap(t.b) - len(t.b)))
	return t
}

// Append returns t followed by s. t itself is unchanged.
func (t Text) Append(s string) Text {
	if s == "" {
		return t
	}
	n, room := len(t.b), cap(t.b)-len(t.b)
	if t.room != nil && room >= len(s) && t.room.counter().CompareAndSwap(int64(room), int64(room-len(s))) {
		// t is the newest value of this buffer and there is room: write in place.
		return Text{b: append(t.b, s...), room: t.room}
	}
	size := n + len(s)
	head := t.head()
	if head == nil && size <= textBlock {
		// A short text: copy into a buffer twice the size, at most a block.
		return newTail(nil, t.b, s, min(max(2*size, 64), textBlock))
	}
	if size <= textBlock {
		// The tail is shared with a newer value or was sized short: copy
		// it (at most a block) into a block of its own.
		return newTail(head, t.b, s, textBlock)
	}
	// The tail is full: it becomes a block as it is, and s starts the next.
	if n > 0 {
		h := &textHead{n: n}
		if head != nil {
			h.blocks = make([][]byte, 0, len(head.blocks)+1)
			h.blocks = append(h.blocks, head.blocks...)
			h.n += head.n
		}
		h.blocks = append(h.blocks, t.b[:n:n])
		head = h
	}
	return newTail(head, nil, s, max(len(s), textBlock))
}

// newTail returns the text of head followed by a new buffer of capacity
// size holding b and s.
func newTail(head *textHead, b []byte, s string, size int) Text {
	nb := make([]byte, len(b)+len(s), size)
	copy(nb, b)
	copy(nb[len(b):], s)
	r := &textRoom{head: head}
	r.left.Store(int64(cap(nb) - len(nb)))
	return Text{b: nb, room: r}
}

// Suffix returns the last n bytes of t (all of t when n is larger), in
// the same buffer and without a copy: appending to it goes on in place as
// it would for t. What is cut off stays in memory until a later append
// outgrows the buffer and copies what is kept into a new one, so a text
// trimmed this way again and again (a terminal's scrollback) costs one
// copy of what it keeps per buffer's worth of output.
func (t Text) Suffix(n int) Text {
	if n >= t.Len() {
		return t
	}
	if n <= 0 {
		return Text{}
	}
	if n <= len(t.b) {
		if t.room.head == nil {
			return Text{b: t.b[len(t.b)-n:], room: t.room}
		}
		return Text{b: t.b[len(t.b)-n:], room: &textRoom{shared: t.room.counterOwner()}}
	}
	// Keep the blocks the last n-len(t.b) bytes of the head are in.
	head := t.room.head
	cut := head.n - (n - len(t.b))
	blocks := head.blocks
	for cut >= len(blocks[0]) {
		cut -= len(blocks[0])
		blocks = blocks[1:]
	}
	h := &textHead{blocks: make([][]byte, len(blocks)), n: n - len(t.b)}
	copy(h.blocks, blocks)
	h.blocks[0] = h.blocks[0][cut:]
	return Text{b: t.b, room: &textRoom{shared: t.room.counterOwner(), head: h}}
}

// Slice returns bytes i to j of t (0 <= i <= j <= t.Len()) as a new
// string, copying only them: a look at part of a long text without
// joining its blocks.
func (t Text) Slice(i, j int) string {
	if i < 0 || j < i || j > t.Len() {
		panic("protocol: Text.Slice out of range")
	}
	var sb strings.Builder
	sb.Grow(j - i)
	pieces := [][]byte{t.b}
	if h := t.head(); h != nil {
		pieces = append(slices.Clip(h.blocks), t.b)
	}
	for _, p := range pieces {
		if j <= 0 {
			break
		}
		if i < len(p) {
			sb.Write(p[max(i, 0):min(j, len(p))])
		}
		i, j = i-len(p), j-len(p)
	}
	return sb.String()
}

// Len returns the length in bytes.
func (t Text) Len() int {
	if h := t.head(); h != nil {
		return h.n + len(t.b)
	}
	return len(t.b)
}

// String returns the text. A text of one buffer (up to a block, or made
// by TextOf) is returned without a copy: the bytes are never modified; a
// longer one is joined into a new string.
func (t Text) String() string {
	if h := t.head(); h != nil {
		var sb strings.Builder
		sb.Grow(t.Len())
		for _, b := range h.blocks {
			sb.Write(b)
		}
		sb.Write(t.b)
		return sb.String()
	}
	if len(t.b) == 0 {
		return ""
	}
	return unsafe.String(&t.b[0], len(t.b))
}

// Equal reports whether two texts hold the same string.
func (t Text) Equal(u Text) bool {
	if t.head() == nil && u.head() == nil {
		return string(t.b) == string(u.b)
	}
	return t.Len() == u.Len() && t.String() == u.String()
}

// MarshalJSONTo writes the text as a JSON string.
func (t Text) MarshalJSONTo(enc *jsontext.Encoder) error {
	if t.head() != nil {
		// A long text: MarshalSized writes it from its blocks.
		return json.MarshalEncode(enc, textRef{t}, enc.Options())
	}
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
