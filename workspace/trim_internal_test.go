package workspace

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ahp-go/ahp/protocol"
)

// TestTrimContent: trimming keeps the last bytes up to the limit, starting
// at a character and, when one is within 4 KiB, just past a line's end;
// texts of one buffer and of many blocks trim alike.
func TestTrimContent(t *testing.T) {
	line := strings.Repeat("é", 40) + "\n" // 81 bytes, two-byte characters
	short := strings.Repeat("x", 5000) + "\n" + strings.Repeat("y", 100)
	tests := []struct {
		name  string
		text  string
		limit int
	}{
		{"lines, small", strings.Repeat(line, 100), 1000},
		{"lines, past a block", strings.Repeat(line, 40000), 1 << 20},
		{"cut inside a character", strings.Repeat(line, 40000), 1<<20 + 1},
		{"no line end near", short, 5050},
		{"all kept", "abc\n", 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var text protocol.Text
			for i := 0; i < len(tt.text); i += 4096 { // as a terminal streams it
				text = text.Append(tt.text[i:min(len(tt.text), i+4096)])
			}
			got, n := trimContent([]protocol.TerminalContentPart{&protocol.TerminalUnclassifiedPart{Value: text}}, tt.limit)
			s := got[0].(*protocol.TerminalUnclassifiedPart).Value.String()
			want := tt.text[len(tt.text)-min(tt.limit, len(tt.text)):]
			for len(want) > 0 && !utf8.RuneStart(want[0]) {
				want = want[1:]
			}
			if i := strings.IndexByte(want, '\n'); i >= 0 && i < 4<<10 && len(want) < len(tt.text) {
				want = want[i+1:]
			}
			if s != want || n != len(want) {
				t.Errorf("kept %d bytes (reported %d), want %d", len(s), n, len(want))
			}
		})
	}
}
