package host

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// replayEntry is one sequenced action kept for reconnecting clients.
type replayEntry struct {
	seq        int64
	channel    string
	actionType string
	envelope   jsontext.Value          // the encoded ActionEnvelope
	env        protocol.ActionEnvelope // the same, for versions that see other shapes
}

// replayLog keeps the most recent action envelopes, bounded by count and by
// bytes, so a client that reconnects can be sent what it missed. It is a
// ring buffer; the host's lock guards it.
type replayLog struct {
	entries  []replayEntry // ring storage
	head     int           // index of the oldest entry
	n        int           // number of entries
	bytes    int
	maxBytes int
	// evicted is the highest sequence number dropped from the log; a client
	// that saw it (or anything after) can be replayed.
	evicted int64
}

func newReplayLog(maxEntries, maxBytes int) *replayLog {
	return &replayLog{entries: make([]replayEntry, maxEntries), maxBytes: maxBytes}
}

// restart empties the log and marks everything up to seq as gone: a client
// that last saw seq or less (in an earlier run of the host) gets snapshots.
func (l *replayLog) restart(seq int64) {
	for l.n > 0 {
		l.dropOldest()
	}
	l.evicted = seq
}

// add appends an entry, evicting the oldest ones past the limits.
func (l *replayLog) add(e replayEntry) {
	if len(l.entries) == 0 {
		l.evicted = e.seq
		return
	}
	for l.n > 0 && (l.n == len(l.entries) || l.bytes+len(e.envelope) > l.maxBytes) {
		l.dropOldest()
	}
	if len(e.envelope) > l.maxBytes {
		l.evicted = e.seq
		return
	}
	l.entries[(l.head+l.n)%len(l.entries)] = e
	l.n++
	l.bytes += len(e.envelope)
}

func (l *replayLog) dropOldest() {
	old := &l.entries[l.head]
	l.evicted = old.seq
	l.bytes -= len(old.envelope)
	*old = replayEntry{}
	l.head = (l.head + 1) % len(l.entries)
	l.n--
}

// since returns the entries after seq on the given channels, and whether
// the log still holds everything after seq.
func (l *replayLog) since(seq int64, channels map[string]bool) ([]replayEntry, bool) {
	if seq < l.evicted {
		return nil, false
	}
	var out []replayEntry
	for i := range l.n {
		e := l.entries[(l.head+i)%len(l.entries)]
		if e.seq > seq && channels[e.channel] {
			out = append(out, e)
		}
	}
	return out, true
}
