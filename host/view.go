package host

import (
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// A chat's completed turns are numbered from 0 (their ordinal). The host
// keeps the most recent ones in memory (ordinals chat.base and up) and reads
// older ones from the store when a snapshot or a page needs them.

// turnsPageSize is how many older turns one fetchTurns returns.
const turnsPageSize = 50

// snapshotStateLocked returns a channel's state as a subscriber is sent
// it. For a chat that is every turn (turns < 0) or about the last turns
// completed ones, with a cursor to the older ones when there are any.
// Turns below the window come from rd (see step); having read them, it
// widens the window with them (keepOlderTurnsLocked).
func (h *Host) snapshotStateLocked(rd *storeReads, ch *channel, turns int) (protocol.SnapshotState, error) {
	cs, ok := ch.state.(*protocol.ChatState)
	if !ok {
		return ch.state, nil
	}
	start := windowStart(ch, turns)
	if start == ch.chat.base && start == 0 && cs.TurnsNextCursor == nil {
		return cs, nil
	}
	v := cs.Clone()
	v.TurnsNextCursor = nil
	if start >= ch.chat.base {
		i := start - ch.chat.base
		v.Turns = cs.Turns[i:len(cs.Turns):len(cs.Turns)]
	} else {
		older, err := storedTurnsLocked(rd, ch, start, ch.chat.base)
		if err != nil {
			return nil, err
		}
		v.Turns = append(older, cs.Turns...)
		h.keepOlderTurnsLocked(ch, older)
	}
	if start > 0 {
		v.TurnsNextCursor = protocol.Ptr(turnsCursor(start))
	}
	return v, nil
}

// keepOlderTurnsLocked puts into memory the newest of the turns just read
// from the store, those just below the chat's window, as far as the window
// has room for (Options.RecentTurns): the next snapshot of the chat finds
// them at hand. Only the window moves; the chat and the store are as they
// were.
func (h *Host) keepOlderTurnsLocked(ch *channel, older []protocol.Turn) {
	cs := ch.state.(*protocol.ChatState)
	n := min(len(older), h.opts.RecentTurns-len(cs.Turns))
	if n <= 0 {
		return
	}
	wider := cs.Clone()
	wider.Turns = append(slices.Clip(older[len(older)-n:]), cs.Turns...)
	ch.state = wider
	ch.chat.base -= int64(n)
	ch.chat.seqs = append(make([]int64, n), ch.chat.seqs...) // stored already
}

// windowStart returns the ordinal of the oldest turn a snapshot of the
// last turns completed turns holds (every turn when turns < 0).
func windowStart(ch *channel, turns int) int64 {
	cs, ok := ch.state.(*protocol.ChatState)
	if !ok || turns < 0 {
		return 0
	}
	return max(0, ch.chat.base+int64(len(cs.Turns))-int64(turns))
}

// turnsCursor encodes "the turns before this ordinal" as an opaque cursor.
func turnsCursor(ordinal int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("before:" + strconv.FormatInt(ordinal, 10)))
}

var errBadCursor = errors.New("unknown or malformed cursor")

func parseTurnsCursor(cursor *string) (int64, error) {
	if cursor == nil {
		return 0, errBadCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(*cursor)
	if err != nil {
		return 0, errBadCursor
	}
	n, ok := strings.CutPrefix(string(raw), "before:")
	if !ok {
		return 0, errBadCursor
	}
	ord, err := strconv.ParseInt(n, 10, 64)
	if err != nil || ord < 0 {
		return 0, errBadCursor
	}
	return ord, nil
}

// turnsPageLocked returns the chat/turnsLoaded action holding the page of
// turns that precede the ordinal end, with the cursor of the page before
// it, and the ordinal of the page's first turn. Turns below the window
// come from the store, through rd (see step).
func (h *Host) turnsPageLocked(rd *storeReads, ch *channel, end int64) (*protocol.ChatTurnsLoadedAction, int64, error) {
	cs := ch.state.(*protocol.ChatState)
	end = min(end, ch.chat.base+int64(len(cs.Turns)))
	start := max(0, end-turnsPageSize)
	turns, err := storedTurnsLocked(rd, ch, start, min(end, ch.chat.base))
	if err != nil {
		return nil, 0, err
	}
	if end > ch.chat.base {
		turns = append(turns, cs.Turns[max(start, ch.chat.base)-ch.chat.base:end-ch.chat.base]...)
	}
	a := &protocol.ChatTurnsLoadedAction{Turns: turns}
	if a.Turns == nil {
		a.Turns = []protocol.Turn{}
	}
	if start > 0 {
		a.TurnsNextCursor = protocol.Ptr(turnsCursor(start))
	}
	return a, start, nil
}
