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
	// bounded: the channel's share of the log is bounded (see
	// maxBoundedChannelBytes); gone: dropped for that bound, a hole
	// that keeps its place in the ring.
	bounded, gone bool
}

// maxBoundedChannelBytes bounds what the log keeps of one channel, so that
// one busy channel neither holds the whole log's bytes nor pushes every
// other channel's actions out. A terminal streaming output and a chat
// streaming a long answer are such channels: the deltas of an answer, kept
// whole up to the log's byte bound, would cost as much memory again as
// the answer (and more than a snapshot of it costs to send). A client
// that missed more of a channel than that gets snapshots, which hold what
// the channel retains (a terminal's scrollback, the answer so far).
const maxBoundedChannelBytes = 2 << 20

// channelShare is what the log holds of one bounded channel: the ring
// positions of its entries, oldest first, and their bytes.
type channelShare struct {
	pos     []int
	bytes   int
	evicted int64 // the highest seq of the channel dropped for the bound
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
	// shares holds the bounded channels that have entries in the log, or
	// lost some more recently than evicted.
	shares   map[string]*channelShare
	maxShare int
}

func newReplayLog(maxEntries, maxBytes int) *replayLog {
	return &replayLog{entries: make([]replayEntry, maxEntries), maxBytes: maxBytes,
		shares: map[string]*channelShare{}, maxShare: min(maxBytes, maxBoundedChannelBytes)}
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
	pos := (l.head + l.n) % len(l.entries)
	l.entries[pos] = e
	l.n++
	l.bytes += len(e.envelope)
	if e.bounded {
		l.addShare(e, pos)
	}
}

// addShare records a bounded channel's entry at pos and drops the
// channel's oldest entries past its bound.
func (l *replayLog) addShare(e replayEntry, pos int) {
	sh := l.shares[e.channel]
	if sh == nil {
		sh = &channelShare{}
		l.shares[e.channel] = sh
	}
	sh.pos = append(sh.pos, pos)
	sh.bytes += len(e.envelope)
	for sh.bytes > l.maxShare && len(sh.pos) > 1 {
		old := &l.entries[sh.pos[0]]
		sh.pos = sh.pos[1:]
		sh.bytes -= len(old.envelope)
		sh.evicted = old.seq
		l.bytes -= len(old.envelope)
		old.envelope, old.env, old.gone = nil, protocol.ActionEnvelope{}, true
	}
	if len(sh.pos) < cap(sh.pos)/4 {
		sh.pos = append([]int(nil), sh.pos...) // let the dropped front go
	}
}

func (l *replayLog) dropOldest() {
	old := &l.entries[l.head]
	l.evicted = old.seq
	l.bytes -= len(old.envelope)
	if old.bounded {
		if sh := l.shares[old.channel]; sh != nil {
			if !old.gone {
				sh.pos = sh.pos[1:]
				sh.bytes -= len(old.envelope)
			}
			if len(sh.pos) == 0 && sh.evicted <= l.evicted {
				delete(l.shares, old.channel)
			}
		}
	}
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
	for ch := range channels {
		if sh := l.shares[ch]; sh != nil && seq < sh.evicted {
			return nil, false
		}
	}
	var out []replayEntry
	for i := range l.n {
		e := l.entries[(l.head+i)%len(l.entries)]
		if e.seq > seq && !e.gone && channels[e.channel] {
			out = append(out, e)
		}
	}
	return out, true
}
