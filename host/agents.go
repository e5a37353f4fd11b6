package host

import (
	"bytes"

	"github.com/go-json-experiment/json"

	"github.com/ahp-go/ahp/protocol"
)

// RefreshAgents reads every agent's Info again and, when the list differs
// from the one in the root state, publishes the new list with
// root/agentsChanged. Call it when an agent has learnt more about itself,
// such as when a probe of the agent finished after the host started.
func (h *Host) RefreshAgents() {
	// Info may take a backend's own lock: read it before the host's.
	infos := make([]protocol.AgentInfo, 0, len(h.opts.Agents))
	for _, b := range h.opts.Agents {
		infos = append(infos, b.Info())
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	root := h.channels[protocol.RootURI]
	if sameAgents(root.state.(*protocol.RootState).Agents, infos) {
		return
	}
	h.commitLocked(root, &protocol.RootAgentsChangedAction{Agents: infos}, nil)
}

// sameAgents reports whether two agent lists encode alike.
func sameAgents(a, b []protocol.AgentInfo) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
