package client

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// mirror is the client's copy of one channel's state, kept by write-ahead
// reconciliation (guide/reconciliation.md):
//
//   - confirmed is the state as the host has sequenced it, built from the
//     snapshot and every envelope since;
//   - pending are this client's own actions, applied locally but not yet
//     echoed by the host, in the order they were sent;
//   - optimistic is confirmed with pending replayed on top: what the
//     application sees.
//
// An echo of the client's own action removes it from pending and applies
// it to confirmed; anyone else's action is applied to confirmed and the
// pending actions are replayed on the new state (a rebase); a rejection
// removes the action from pending, reverting its effect.
//
// mirror does no I/O and no locking; its owner serializes calls.
type mirror struct {
	uri      string
	clientID string
	red      reducer.Reducer

	confirmed  protocol.SnapshotState
	optimistic protocol.SnapshotState
	// seq is the serverSeq of the latest change applied to confirmed, or
	// the snapshot's fromSeq.
	seq     int64
	pending []pendingAction
}

// pendingAction is one of the client's actions awaiting its echo.
type pendingAction struct {
	clientSeq int64
	action    protocol.StateAction
	receipt   *Receipt // nil in tests and benchmarks
}

func newMirror(clientID string, red reducer.Reducer, snap *protocol.Snapshot) *mirror {
	m := &mirror{uri: snap.Resource, clientID: clientID, red: red}
	m.reset(snap)
	return m
}

// reset replaces the confirmed state with a snapshot. Pending actions are
// kept; the caller clears them when the protocol says so.
func (m *mirror) reset(snap *protocol.Snapshot) {
	m.confirmed = snap.State
	m.seq = snap.FromSeq
	m.rebase()
}

// rebase recomputes the optimistic state from the confirmed one.
func (m *mirror) rebase() {
	st := m.confirmed
	for _, p := range m.pending {
		st = m.red.Apply(st, p.action)
	}
	m.optimistic = st
}

// dispatch records one of the client's own actions and applies it
// optimistically.
func (m *mirror) dispatch(p pendingAction) {
	m.pending = append(m.pending, p)
	m.optimistic = m.red.Apply(m.optimistic, p.action)
}

// withdraw removes a pending action that never reached the host. It
// reports whether the action was still pending.
func (m *mirror) withdraw(clientSeq int64) bool {
	i := m.find(clientSeq)
	if i < 0 {
		return false
	}
	m.pending = slices.Delete(m.pending, i, i+1)
	m.rebase()
	return true
}

func (m *mirror) find(clientSeq int64) int {
	for i := range m.pending {
		if m.pending[i].clientSeq == clientSeq {
			return i
		}
	}
	return -1
}

// outcome is what receiving one envelope did.
type outcome struct {
	changed bool           // the optimistic state changed
	settled *pendingAction // the own action this envelope echoed or rejected
}

// receive reconciles one envelope of the mirror's channel. Envelopes must
// arrive in the order the host sent them.
func (m *mirror) receive(env *protocol.ActionEnvelope) outcome {
	own := env.Origin != nil && env.Origin.ClientID == m.clientID
	if env.RejectionReason != nil {
		// Rejections carry the current serverSeq, not a new one, and leave
		// the confirmed state alone.
		if !own {
			return outcome{}
		}
		i := m.find(env.Origin.ClientSeq)
		if i < 0 {
			return outcome{}
		}
		p := m.pending[i]
		m.pending = slices.Delete(m.pending, i, i+1)
		m.rebase()
		return outcome{changed: true, settled: &p}
	}
	// A change is sequenced after everything in the snapshot. An envelope
	// carrying the mirror's own seq is one the host sent to this client
	// alone (a page of older turns): it is new as well.
	if env.ServerSeq < m.seq {
		return outcome{}
	}
	m.seq = env.ServerSeq
	m.confirmed = m.red.Apply(m.confirmed, env.Action)
	var out outcome
	out.changed = true
	if own {
		if i := m.find(env.Origin.ClientSeq); i >= 0 {
			p := m.pending[i]
			out.settled = &p
			if i == 0 && len(m.pending) == 1 {
				// The usual case: the one action in flight came back, and
				// nothing else needs replaying.
				m.pending = m.pending[:0]
				m.optimistic = m.confirmed
				return out
			}
			m.pending = slices.Delete(m.pending, i, i+1)
		}
	}
	if len(m.pending) == 0 {
		m.optimistic = m.confirmed
		return out
	}
	m.rebase()
	return out
}

// clearPending drops every pending action, as a reconnection requires, and
// returns them.
func (m *mirror) clearPending() []pendingAction {
	dropped := m.pending
	m.pending = nil
	m.optimistic = m.confirmed
	return dropped
}
