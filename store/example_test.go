package store_test

import (
	"context"
	"fmt"

	"github.com/ahp-go/ahp/store"
)

// A host writes a session's catalog entry and its first snapshot in one
// batch, appends actions as they happen, and reads them back after a
// restart.
func ExampleNewMemory() {
	ctx := context.Background()
	st := store.NewMemory()
	defer st.Close()

	const s, chat = "ahp-session:/demo", "ahp-chat:/demo"
	err := st.Write(ctx, store.Batch{
		store.PutSession{Session: store.Session{URI: s, ModifiedAt: "2026-01-01T00:00:00.000Z", Summary: []byte(`{}`), Chats: []string{chat}}},
		store.PutSnapshot{Snapshot: store.Snapshot{Channel: chat, Session: s, Seq: 1, State: []byte(`{"turns":[]}`)}},
		store.AppendAction{Action: store.Action{Seq: 2, Channel: chat, Envelope: []byte(`{"serverSeq":2}`)}},
		store.PutTurn{Turn: store.Turn{Chat: chat, Ordinal: 0, ID: "t1", Data: []byte(`{"id":"t1"}`)}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	data, err := st.LoadSession(ctx, s, 10)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := data.Channels[0]
	fmt.Printf("%s: snapshot at %d, %d action after it, %d turn\n", c.Channel, c.Seq, len(c.Actions), c.TurnCount)
	seq, _ := st.Seq(ctx)
	fmt.Println("serverSeq so far:", seq)
	// Output:
	// ahp-chat:/demo: snapshot at 1, 1 action after it, 1 turn
	// serverSeq so far: 2
}
