package host

import "github.com/ahp-go/ahp/protocol"

// SessionState returns the current state of the agent's session, or nil
// when it is gone. The value must not be modified. An agent reads the
// session's active clients from it (the ACP bridge offers their tools).
func (ah agentHost) SessionState() *protocol.SessionState {
	h := ah.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if ch := h.channels[ah.s.uri]; ch != nil && h.sessions[ah.s.uri] == ah.s {
		if st, ok := ch.state.(*protocol.SessionState); ok {
			return st
		}
	}
	return nil
}
