package host

import (
	"testing"

	"github.com/ahp-go/ahp/protocol"
)

// TestEncodeAction checks the pooled encoder against protocol.Marshal, for
// a small action and for one large enough to leave the pool.
func TestEncodeAction(t *testing.T) {
	big := make([]byte, maxPooledEncoder+1)
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	for _, content := range []string{"8 bytes ", "quote \" and \u00e9", string(big), "again"} {
		env := protocol.ActionEnvelope{Channel: "ahp-chat:/c", ServerSeq: 42,
			Action: &protocol.ChatDeltaAction{TurnID: "t", PartID: "p", Content: content},
			Origin: &protocol.ActionOrigin{ClientID: "c1", ClientSeq: 3}}
		msg, body, err := encodeAction(&env)
		if err != nil {
			t.Fatal(err)
		}
		want, err := protocol.Marshal(env)
		if err != nil {
			t.Fatal(err)
		}
		if string(body) != string(want) {
			t.Errorf("envelope:\n got %s\nwant %s", body, want)
		}
		if string(msg) != actionPrefix+string(want)+"}" {
			t.Errorf("message: %s", msg)
		}
		if cap(msg) != len(msg) {
			t.Errorf("message has spare capacity %d", cap(msg)-len(msg))
		}
	}
}

func BenchmarkEncodeAction(b *testing.B) {
	env := protocol.ActionEnvelope{Channel: "ahp-chat:/3f2b8a6d-4c2a-4f8e-9a51", ServerSeq: 1234567,
		Action: &protocol.ChatDeltaAction{TurnID: "turn-42", PartID: "part-1", Content: "Hello, w"}}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := encodeAction(&env); err != nil {
			b.Fatal(err)
		}
	}
}
