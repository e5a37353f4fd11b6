package protocol

import (
	"bytes"
	"strings"
	"testing"
)

// MarshalSized writes long texts from their blocks exactly as Marshal
// writes their joined string: escapes, characters cut by a block's end,
// several long texts in one value, and values with none.
func TestMarshalSized(t *testing.T) {
	long := func(piece string, n int) Text {
		var v Text
		for range n {
			v = v.Append(piece)
		}
		return v
	}
	turn := func(texts ...Text) *Turn {
		tr := &Turn{ID: "t1"}
		for i, x := range texts {
			tr.ResponseParts = append(tr.ResponseParts, &MarkdownResponsePart{ID: string(rune('a' + i)), Content: x})
		}
		return tr
	}
	for _, tc := range []struct {
		name string
		v    any
	}{
		{"short", turn(TextOf("hi \"there\"\n"))},
		{"ascii", turn(long("lorem ipsum \"dolor\"\tsit\n", 100000))},
		// 3-byte characters in 1 KiB + 1 pieces: block ends fall inside them.
		{"cut characters", turn(long(strings.Repeat("€", 341)+"x\x01", 3000))},
		{"4-byte characters", turn(long("a😀", 700000))},
		{"several", turn(TextOf("short"), long("x", 3<<20), long("é", 2<<20), TextOf(""))},
		{"none", &Turn{ID: "empty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			for _, hint := range []int{0, 100, len(want), 10 * len(want)} {
				got, err := MarshalSized(tc.v, hint)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					i := 0
					for i < min(len(got), len(want)) && got[i] == want[i] {
						i++
					}
					t.Fatalf("hint %d: differs from Marshal at byte %d of %d/%d", hint, i, len(got), len(want))
				}
				if cap(got) > 2*len(got)+4096 {
					t.Fatalf("hint %d: %d bytes kept in a buffer of %d", hint, len(got), cap(got))
				}
			}
		})
	}
}
