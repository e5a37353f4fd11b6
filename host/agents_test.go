package host_test

import (
	"sync"
	"testing"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

// changingAgent is the echo agent with a description that can change, as
// an agent's does when its probe finishes after the host started.
type changingAgent struct {
	agent.Backend
	mu   sync.Mutex
	desc string
}

func (a *changingAgent) Info() protocol.AgentInfo {
	info := a.Backend.Info()
	a.mu.Lock()
	info.Description = a.desc
	a.mu.Unlock()
	return info
}

func (a *changingAgent) set(desc string) {
	a.mu.Lock()
	a.desc = desc
	a.mu.Unlock()
}

// TestRefreshAgents: RefreshAgents publishes a changed agent list with
// root/agentsChanged, and nothing when it did not change.
func TestRefreshAgents(t *testing.T) {
	ag := &changingAgent{Backend: echo.New(nil), desc: "starting"}
	th := startHost(t, &host.Options{Agents: []agent.Backend{ag}})
	c := th.dial(t, "a")
	res := c.initialize(protocol.RootURI)
	if d := res.Snapshots[0].State.(*protocol.RootState).Agents[0].Description; d != "starting" {
		t.Fatalf("description %q", d)
	}
	th.h.RefreshAgents() // unchanged: nothing is sent
	ag.set("ready")
	th.h.RefreshAgents()
	envs := c.WaitFor("agents changed", hasType("root/agentsChanged"))
	n := 0
	for _, e := range envs {
		if a, ok := e.Action.(*protocol.RootAgentsChangedAction); ok {
			n++
			if len(a.Agents) != 1 || a.Agents[0].Description != "ready" || a.Agents[0].Provider != echo.Provider {
				t.Errorf("agents %+v", a.Agents)
			}
		}
	}
	if n != 1 {
		t.Errorf("%d root/agentsChanged, want 1", n)
	}
	st := c.Subscribe(protocol.RootURI).State.(*protocol.RootState)
	if st.Agents[0].Description != "ready" {
		t.Errorf("root state after the change: %+v", st.Agents)
	}
}
