package host

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// marshalSized encodes as protocol.Marshal does whatever its hint, and
// keeps no large unused room when the hint was too big.
func TestMarshalSized(t *testing.T) {
	turn := &protocol.Turn{ID: "t1", ResponseParts: []protocol.ResponsePart{
		&protocol.MarkdownResponsePart{ID: "p", Content: protocol.TextOf(strings.Repeat("a \"quoted\" line\n", 4096))},
	}}
	want, err := protocol.Marshal(turn)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		hint int
	}{
		{"none", 0},
		{"small", 100},
		{"exact", len(want)},
		{"over", 10 * len(want)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := marshalSized(turn, tc.hint)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("encoding differs from protocol.Marshal:\n%.200s\n%.200s", got, want)
			}
			if cap(got) > 2*len(got)+4096 {
				t.Fatalf("%d bytes kept in a buffer of %d", len(got), cap(got))
			}
		})
	}
}
