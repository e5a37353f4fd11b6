package sqlite

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/store"
)

// BenchmarkWrite writes batches of ten actions and a snapshot, the shape
// of a host's group commit while a turn streams, with synchronous=NORMAL so
// that the figure is the store's own work rather than the disk's.
func BenchmarkWrite(b *testing.B) {
	st, err := Open(b.TempDir(), &Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	const chat, sess = "ahp-chat:/bench", "ahp-session:/bench"
	envelope := []byte(`{"text":"` + strings.Repeat("x", 200) + `"}`)
	state := []byte(`{"state":"` + strings.Repeat("y", 800) + `"}`)
	if err := st.Write(ctx, putSession(sess)); err != nil {
		b.Fatal(err)
	}
	seq := int64(0)
	b.ReportAllocs()
	for b.Loop() {
		batch := make(store.Batch, 0, 11)
		for range 10 {
			seq++
			batch = append(batch, store.AppendAction{Action: store.Action{Seq: seq, Channel: chat, At: seq, Envelope: envelope}})
		}
		batch = append(batch, store.PutSnapshot{Snapshot: store.Snapshot{Channel: chat, Session: sess, Seq: seq - 5, State: state}})
		if err := st.Write(ctx, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckFiles is the check each batch runs twice (before and
// after its commit): the cost it adds to a write.
func BenchmarkCheckFiles(b *testing.B) {
	st, err := Open(b.TempDir(), &Options{NoSync: true, BackupInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.Write(ctx, putSession("ahp-session:/bench")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := st.Check(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
