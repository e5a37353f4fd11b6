package sqlite

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store"
)

// BenchmarkLoadSession loads each of 100 stored sessions (a session
// channel and a chat of 20 turns, a few actions after each snapshot)
// once per iteration: with the one recent turn a host asks for, and with
// all 20.
func BenchmarkLoadSession(b *testing.B) {
	st, err := Open(b.TempDir(), &Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const sessions, turns = 100, 20
	uris := make([]string, sessions)
	seq := int64(0)
	blob := func(n int, what string) []byte {
		return []byte(`{"what":"` + what + `","text":"` + strings.Repeat("x", n) + `"}`)
	}
	for i := range uris {
		uri := fmt.Sprintf("ahp-session:/bench-%03d", i)
		chat := fmt.Sprintf("ahp-chat:/bench-%03d", i)
		uris[i] = uri
		batch := store.Batch{
			store.PutSession{Session: store.Session{URI: uri, ModifiedAt: "2026-01-01T00:00:00.000Z", Summary: blob(150, "summary"), Chats: []string{chat}}},
			store.PutSnapshot{Snapshot: store.Snapshot{Channel: uri, Session: uri, Seq: seq, State: blob(400, "session")}},
			store.PutSnapshot{Snapshot: store.Snapshot{Channel: chat, Session: uri, Seq: seq, State: blob(800, "chat")}},
		}
		for t := range int64(turns) {
			batch = append(batch, store.PutTurn{Turn: store.Turn{Chat: chat, Ordinal: t, ID: fmt.Sprintf("t%02d", t), Data: blob(500, "turn")}})
		}
		for _, ch := range []string{uri, chat, chat} {
			seq++
			batch = append(batch, store.AppendAction{Action: store.Action{Seq: seq, Channel: ch, At: seq, Envelope: blob(120, "action")}})
		}
		if err := st.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
	for _, recent := range []int{1, turns} {
		b.Run(fmt.Sprintf("recent=%d", recent), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, uri := range uris {
					d, err := st.LoadSession(ctx, uri, recent)
					if err != nil {
						b.Fatal(err)
					}
					if len(d.Channels) != 2 || len(d.Channels[1].Turns) != recent {
						b.Fatalf("loaded %+v", d)
					}
				}
			}
		})
	}
}
