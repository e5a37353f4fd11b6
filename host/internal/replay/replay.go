// Package replay keeps a host's most recent action envelopes, so that a
// client that reconnects can be sent what it missed.
//
// Contract: a Log holds the entries added last, bounded by count, by bytes
// and, for each channel whose entries are marked Bounded, by a share of
// its own. Since answers either every entry after a serverSeq on the
// channels asked for, or that the log no longer holds them all (the client
// then needs snapshots); it never answers with a gap. A Log is not safe for
// concurrent use: the host calls it under its lock.
package replay

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// Entry is one sequenced action kept for reconnecting clients.
type Entry struct {
	Seq        int64
	Channel    string
	ActionType string
	Envelope   jsontext.Value          // the encoded ActionEnvelope
	Env        protocol.ActionEnvelope // the same, for versions that see other shapes
	// Bounded: the channel's share of the log is bounded (see
	// maxBoundedChannelBytes).
	Bounded bool
	// gone: dropped for that bound, a hole that keeps its place in the
	// ring.
	gone bool
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

// Log keeps the most recent action envelopes, bounded by count and by
// bytes, so a client that reconnects can be sent what it missed. It is a
// ring buffer; the host's lock guards it.
type Log struct {
	entries  []Entry // ring storage
	head     int     // index of the oldest entry
	n        int     // number of entries
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

// New returns an empty log of at most maxEntries entries and maxBytes
// bytes of envelopes. A log of no entries keeps nothing.
func New(maxEntries, maxBytes int) *Log {
	return &Log{entries: make([]Entry, maxEntries), maxBytes: maxBytes,
		shares: map[string]*channelShare{}, maxShare: min(maxBytes, maxBoundedChannelBytes)}
}

// Restart empties the log and marks everything up to seq as gone: a client
// that last saw seq or less (in an earlier run of the host) gets snapshots.
func (l *Log) Restart(seq int64) {
	for l.n > 0 {
		l.dropOldest()
	}
	l.evicted = seq
}

// Add appends an entry, evicting the oldest ones past the limits.
func (l *Log) Add(e Entry) {
	if len(l.entries) == 0 {
		l.evicted = e.Seq
		return
	}
	for l.n > 0 && (l.n == len(l.entries) || l.bytes+len(e.Envelope) > l.maxBytes) {
		l.dropOldest()
	}
	if len(e.Envelope) > l.maxBytes {
		l.evicted = e.Seq
		return
	}
	pos := (l.head + l.n) % len(l.entries)
	l.entries[pos] = e
	l.n++
	l.bytes += len(e.Envelope)
	if e.Bounded {
		l.addShare(e, pos)
	}
}

// addShare records a bounded channel's entry at pos and drops the
// channel's oldest entries past its bound.
func (l *Log) addShare(e Entry, pos int) {
	sh := l.shares[e.Channel]
	if sh == nil {
		sh = &channelShare{}
		l.shares[e.Channel] = sh
	}
	sh.pos = append(sh.pos, pos)
	sh.bytes += len(e.Envelope)
	for sh.bytes > l.maxShare && len(sh.pos) > 1 {
		old := &l.entries[sh.pos[0]]
		sh.pos = sh.pos[1:]
		sh.bytes -= len(old.Envelope)
		sh.evicted = old.Seq
		l.bytes -= len(old.Envelope)
		old.Envelope, old.Env, old.gone = nil, protocol.ActionEnvelope{}, true
	}
	if len(sh.pos) < cap(sh.pos)/4 {
		sh.pos = append([]int(nil), sh.pos...) // let the dropped front go
	}
}

func (l *Log) dropOldest() {
	old := &l.entries[l.head]
	l.evicted = old.Seq
	l.bytes -= len(old.Envelope)
	if old.Bounded {
		if sh := l.shares[old.Channel]; sh != nil {
			if !old.gone {
				sh.pos = sh.pos[1:]
				sh.bytes -= len(old.Envelope)
			}
			if len(sh.pos) == 0 && sh.evicted <= l.evicted {
				delete(l.shares, old.Channel)
			}
		}
	}
	*old = Entry{}
	l.head = (l.head + 1) % len(l.entries)
	l.n--
}

// Since returns the entries after seq on the given channels, and whether
// the log still holds everything after seq.
func (l *Log) Since(seq int64, channels map[string]bool) ([]Entry, bool) {
	if seq < l.evicted {
		return nil, false
	}
	for ch := range channels {
		if sh := l.shares[ch]; sh != nil && seq < sh.evicted {
			return nil, false
		}
	}
	var out []Entry
	for i := range l.n {
		e := l.entries[(l.head+i)%len(l.entries)]
		if e.Seq > seq && !e.gone && channels[e.Channel] {
			out = append(out, e)
		}
	}
	return out, true
}

// Len returns how many entries the log holds and the bytes of their
// envelopes.
func (l *Log) Len() (entries, bytes int) { return l.n, l.bytes }
