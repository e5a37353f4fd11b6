package host

import (
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// Stats is what a host holds and has done, for monitoring (package
// internal/metrics turns it into Prometheus metrics at each scrape).
// Counters count from the host's start.
type Stats struct {
	// Connections are the open client connections, initialized or not;
	// Subscriptions their subscriptions to channels.
	Connections   int
	Subscriptions int
	// SessionsStored counts every session, in memory or only in the
	// store; SessionsLoaded those whose channels are in memory.
	SessionsStored int
	SessionsLoaded int
	// Chats counts the chats of every session; Channels the channels in
	// memory (the root, loaded sessions and their chats).
	Chats    int
	Channels int
	// Actions counts the changes the host committed.
	Actions int64
	// QueueBytes is what is queued to clients and not yet written to
	// them; Dropped counts the clients disconnected for falling that far
	// behind (Options.QueueBytes, Options.QueueSize).
	QueueBytes int64
	Dropped    int64
	// ReplayEntries and ReplayBytes measure the replay log.
	ReplayEntries int
	ReplayBytes   int
	// SaveBacklog is how many changes wait to be written to the store;
	// SaveBatches and SaveRetries count the writes and the failed
	// attempts; SaveOldest is how long the oldest change not yet saved
	// has waited. SaveError says why the host cannot save changes now
	// (the store fails, is damaged, or has not saved for longer than
	// Options.MaxSaveDelay), so that it refuses new work; nil when it can.
	SaveBacklog int
	SaveBatches int64
	SaveRetries int64
	SaveOldest  time.Duration
	SaveError   error
	// TurnsRunning counts the turns running now; TurnsEnded the turns
	// that ended, by outcome: "complete", "error" or "cancelled".
	TurnsRunning int
	TurnsEnded   map[string]int64
}

// Turn outcomes as Stats.TurnsEnded counts them.
const (
	TurnComplete  = "complete"
	TurnError     = "error"
	TurnCancelled = "cancelled"
)

// turnCounts counts ended turns by outcome. Guarded by Host.mu.
type turnCounts struct{ complete, error, cancelled int64 }

// Stats reports what the host holds and has done. It takes the host's lock
// for a walk of the connections and the loaded chats, so it is meant for
// a scrape every few seconds, not for every change.
func (h *Host) Stats() Stats {
	h.mu.Lock()
	replayEntries, replayBytes := h.replay.Len()
	s := Stats{
		Connections:    len(h.conns),
		SessionsStored: len(h.sessions),
		Chats:          len(h.chatOwner),
		Channels:       len(h.channels),
		Actions:        h.seq - h.startSeq,
		ReplayEntries:  replayEntries,
		ReplayBytes:    replayBytes,
		TurnsEnded: map[string]int64{
			TurnComplete:  h.turns.complete,
			TurnError:     h.turns.error,
			TurnCancelled: h.turns.cancelled,
		},
	}
	conns := make([]*conn, 0, len(h.conns))
	for c := range h.conns {
		conns = append(conns, c)
		s.Subscriptions += len(c.subs)
	}
	for _, ses := range h.sessions {
		if ses.loaded {
			s.SessionsLoaded++
			for _, ch := range ses.chats {
				if ch.state.(*protocol.ChatState).ActiveTurn != nil {
					s.TurnsRunning++
				}
			}
		}
	}
	h.mu.Unlock()
	for _, c := range conns {
		if c.rpc != nil {
			s.QueueBytes += c.rpc.QueuedBytes()
		}
	}
	s.Dropped = h.dropped.Load()
	js := h.jr.Stats(h.opts.Now())
	s.SaveBacklog, s.SaveBatches, s.SaveRetries, s.SaveOldest = js.Backlog, js.Batches, js.Retries, js.Oldest
	s.SaveError = h.jr.Failing()
	return s
}
