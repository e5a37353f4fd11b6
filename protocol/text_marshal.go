package protocol

import (
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// textRef is how Text.MarshalJSONTo hands a long text to MarshalSized,
// which writes it from its blocks. Encoded any other way, it is the
// text's JSON string.
type textRef struct{ t Text }

func (r textRef) MarshalJSONTo(enc *jsontext.Encoder) error {
	return writeString(enc, r.t.String())
}

// MarshalSized encodes v as Marshal does, into a buffer sized for about
// hint bytes. The texts in v longer than a block are not joined into one
// string to be encoded: v is encoded with an empty string in their place,
// and the result is copied into the final buffer with each text quoted
// from its blocks where its string goes. A long streamed text is then held
// once, plus its one encoding, instead of also as a joined string.
//
// A hint under a block's size says v holds no long text (the hint counts
// its texts), and v is then encoded as Marshal does: into the encoder's
// pooled buffer, copied out at its exact size. Were a long text there
// after all, it would be joined first, which costs memory, not
// correctness.
func MarshalSized(v any, hint int) ([]byte, error) {
	if hint < textBlock {
		return json.Marshal(v)
	}
	type hole struct {
		at int // offset just past the opening quote of the empty string
		t  Text
	}
	var holes []hole
	size := 0
	opt := json.WithMarshalers(json.MarshalToFunc(func(enc *jsontext.Encoder, r textRef) error {
		if err := enc.WriteToken(jsontext.String("")); err != nil {
			return err
		}
		holes = append(holes, hole{at: int(enc.OutputOffset()) - 1, t: r.t})
		size += r.t.Len()
		return nil
	}))
	// The skeleton is encoded as Marshal does, into the encoder's pooled
	// buffer and copied out at its exact size: without long texts it is
	// small, and it is the whole result when there are none.
	skel, err := json.Marshal(v, opt)
	if err != nil || len(holes) == 0 {
		return skel, err
	}
	out := make([]byte, 0, len(skel)+size+size/32+64)
	prev := 0
	for _, h := range holes {
		out = append(out, skel[prev:h.at]...)
		var err error
		if out, err = appendTextEscaped(out, h.t); err != nil {
			return nil, err
		}
		prev = h.at
	}
	return append(out, skel[prev:]...), nil
}

// appendTextEscaped appends the text as the inside of a JSON string
// (without the quotes), escaped as jsontext does, a block at a time. A
// character cut by a block's end is completed from the next block.
func appendTextEscaped(dst []byte, t Text) ([]byte, error) {
	var carry [utf8.UTFMax]byte
	nc := 0
	quote := func(p []byte) error {
		start := len(dst)
		var err error
		if dst, err = jsontext.AppendQuote(dst, p); err != nil {
			return err
		}
		// Drop the quotes AppendQuote put around it.
		copy(dst[start:], dst[start+1:len(dst)-1])
		dst = dst[:len(dst)-2]
		return nil
	}
	piece := func(p []byte) error {
		if nc > 0 {
			// Complete the character carried over from the last block.
			k := 0
			for k < len(p) && nc < len(carry) && !utf8.FullRune(carry[:nc]) {
				carry[nc] = p[k]
				nc, k = nc+1, k+1
			}
			if !utf8.FullRune(carry[:nc]) && k == len(p) {
				return nil // still short: wait for the next block
			}
			if err := quote(carry[:nc]); err != nil {
				return err
			}
			nc, p = 0, p[k:]
		}
		cut := len(p)
		for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax+1; i-- {
			if utf8.RuneStart(p[i]) {
				if !utf8.FullRune(p[i:]) {
					cut = i
				}
				break
			}
		}
		nc = copy(carry[:], p[cut:])
		return quote(p[:cut])
	}
	if h := t.head(); h != nil {
		for _, b := range h.blocks {
			if err := piece(b); err != nil {
				return nil, err
			}
		}
	}
	if err := piece(t.b); err != nil {
		return nil, err
	}
	if nc > 0 {
		return dst, quote(carry[:nc]) // a cut character at the very end: invalid, reported as jsontext would
	}
	return dst, nil
}
