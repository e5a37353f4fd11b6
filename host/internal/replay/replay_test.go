package replay

import (
	"bytes"
	"testing"
)

// A channel opened with OpenChannel keeps at most maxBoundedChannelBytes
// in the replay log: a client that missed more of it gets snapshots, while
// the other channels' actions stay replayable.
func TestReplayLogBoundsOneChannel(t *testing.T) {
	l := New(1000, 64<<20)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	seq := int64(0)
	add := func(channel string, bounded bool) int64 {
		seq++
		l.Add(Entry{Seq: seq, Channel: channel, Envelope: chunk, Bounded: bounded})
		return seq
	}
	chat := add("chat", false)
	for range 3 * maxBoundedChannelBytes / len(chunk) {
		add("term", true)
	}
	checkBytes(t, l)
	if l.bytes > maxBoundedChannelBytes+len(chunk) {
		t.Fatalf("the log holds %d bytes, want about %d", l.bytes, maxBoundedChannelBytes)
	}
	sh := l.shares["term"]
	if _, ok := l.Since(chat, map[string]bool{"term": true}); ok {
		t.Fatal("a client that missed dropped terminal output was offered a replay")
	}
	if got, ok := l.Since(sh.evicted, map[string]bool{"term": true}); !ok || len(got) != maxBoundedChannelBytes/len(chunk) {
		t.Fatalf("replay after the bound: %d entries, %v; want %d", len(got), ok, maxBoundedChannelBytes/len(chunk))
	}
	if got, ok := l.Since(0, map[string]bool{"chat": true}); !ok || len(got) != 1 || got[0].Seq != chat {
		t.Fatalf("the other channel's replay: %v, %v", got, ok)
	}

	// The ring turning over lets go of the channel's record.
	for range 1000 {
		add("chat", false)
	}
	checkBytes(t, l)
	if len(l.shares) != 0 {
		t.Fatalf("%d channel records left after the ring turned over", len(l.shares))
	}
	if _, ok := l.Since(l.evicted, map[string]bool{"term": true, "chat": true}); !ok {
		t.Fatal("no replay from the log's start")
	}
}

// checkBytes checks the log's byte count against its entries.
func checkBytes(t *testing.T, l *Log) {
	t.Helper()
	n := 0
	for i := range l.n {
		e := l.entries[(l.head+i)%len(l.entries)]
		if e.gone && e.Envelope != nil {
			t.Fatalf("entry %d dropped but holds its envelope", e.Seq)
		}
		n += len(e.Envelope)
	}
	if n != l.bytes {
		t.Fatalf("the log counts %d bytes, its entries hold %d", l.bytes, n)
	}
	for ch, sh := range l.shares {
		m := 0
		for _, p := range sh.pos {
			if e := l.entries[p]; e.Channel != ch || e.gone {
				t.Fatalf("share of %s points at entry %d of %s (gone %v)", ch, e.Seq, e.Channel, e.gone)
			}
			m += len(l.entries[p].Envelope)
		}
		if m != sh.bytes {
			t.Fatalf("share of %s counts %d bytes, holds %d", ch, sh.bytes, m)
		}
	}
}
