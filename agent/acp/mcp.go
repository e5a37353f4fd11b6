package acp

import (
	"slices"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// MCP servers from the configuration.
//
// Each server of Config.MCPServers is listed in the session's
// customizations as a top-level McpServerCustomization with id
// "mcp-NAME" and a state:
//
//	stopped   turned off (by the configuration's disabled, or a client)
//	error     the agent cannot take its transport (an HTTP or SSE server
//	          for an agent without mcpCapabilities.http or .sse)
//	starting  turned on, and not yet given to the default chat's ACP session
//	ready     given to the default chat's ACP session, which accepted it
//	          (session/new or session/load answered)
//
// ACP sets a session's MCP servers only when the session is created or
// loaded, so a client's session/customizationToggled applies from the
// chat's next prompt: before it runs, a chat whose ACP session was opened
// with another set of servers is loaded again (session/load, which keeps
// its conversation) with the new set. An agent that cannot load sessions
// keeps the set of each ACP session it opened; the change reaches the
// chats opened after it, and every chat after a restart of the agent.
// The choice is remembered with the session (Host.Remember) and survives
// a restart of ahpd. session/mcpServerStopRequested and
// session/mcpServerStartRequested take a server out and put it back the
// same way, from the next prompt, without touching its enablement (and
// are forgotten at a restart).

// mcpMemoKey is the Host.Remember key of the servers' enablement.
const mcpMemoKey = "mcpEnabled"

// mcpStartStop takes a client's session/mcpServerStopRequested (stop) or
// session/mcpServerStartRequested. A stopped server is left out of the
// chats' next prompts, as one turned off, without changing its
// enablement; a start undoes a stop (a server turned off stays off). The
// customizations are published again, replacing the reducer's optimistic
// state with the host's.
func (s *session) mcpStartStop(id string, stop bool) {
	name, ok := strings.CutPrefix(id, "mcp-")
	if !ok || !slices.ContainsFunc(s.b.cfg.MCPServers, func(m MCPServer) bool { return m.Name == name }) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if stop {
		if s.mcpStopped == nil {
			s.mcpStopped = map[string]bool{}
		}
		s.mcpStopped[name] = true
	} else {
		delete(s.mcpStopped, name)
	}
	s.custom = true
	s.flushSessionLocked()
}

// mcpContributor names the configured MCP server of an agent's tool call
// by its title, when the agent titles MCP tool calls as Claude Code does
// ("mcp__SERVER__TOOL"); nil otherwise. The server list is the
// configuration's, which does not change: no lock is needed.
func (s *session) mcpContributor(title string) protocol.ToolCallContributor {
	rest, ok := strings.CutPrefix(title, "mcp__")
	if !ok {
		return nil
	}
	name, _, ok := strings.Cut(rest, "__")
	if !ok || !slices.ContainsFunc(s.b.cfg.MCPServers, func(m MCPServer) bool { return m.Name == name }) {
		return nil
	}
	return &protocol.ToolCallMCPContributor{CustomizationID: mcpCustomizationID(name)}
}

// mcpCustomizationID is the customization id of a configured server.
func mcpCustomizationID(name string) string { return "mcp-" + name }

// mcpEnabledLocked reports whether a configured server is on: the
// client's choice, else the configuration's.
func (s *session) mcpEnabledLocked(m *MCPServer) bool {
	if s.mcpStopped[m.Name] {
		return false
	}
	if on, ok := s.mcpChoice[m.Name]; ok {
		return on
	}
	return !m.Disabled
}

// mcpCapsLocked returns the MCP capabilities of the agent: of the running
// process, else of the one that ran last, else of the probe.
func (s *session) mcpCapsLocked() acpsdk.McpCapabilities {
	if s.proc != nil {
		s.mcpCaps = s.proc.init.AgentCapabilities.McpCapabilities
	}
	return s.mcpCaps
}

// mcpServersLocked returns the servers a chat's ACP session gets on
// process p, and the signature of the set (to tell when it changed).
func (s *session) mcpServersLocked(c *chat, p *process) ([]acpsdk.McpServer, string) {
	caps := p.init.AgentCapabilities.McpCapabilities
	expand := expander(s.b.opts.Environ)
	list := []acpsdk.McpServer{}
	var names []string
	for i := range s.b.cfg.MCPServers {
		m := &s.b.cfg.MCPServers[i]
		if !s.mcpEnabledLocked(m) || m.supported(caps) != "" {
			continue
		}
		list = append(list, m.acpServer(expand))
		names = append(names, m.Name)
	}
	if c.tools != nil {
		list = append(list, c.tools.acpServer())
		names = append(names, c.tools.signature())
	}
	return list, strings.Join(names, ",")
}

// mcpOpenedLocked records the set of servers a chat's ACP session was
// opened with. The default chat's set shows in the customizations.
func (s *session) mcpOpenedLocked(c *chat, sig string) {
	c.mcpSig = sig
	if c.uri != s.defaultChat || len(s.b.cfg.MCPServers) == 0 {
		return
	}
	live := map[string]bool{}
	for name := range strings.SplitSeq(sig, ",") {
		live[name] = true
	}
	s.mcpLive = live
	s.custom = true
	s.flushSessionLocked()
}

// mcpCustomizationsLocked lists the configured servers as customizations.
func (s *session) mcpCustomizationsLocked() []protocol.Customization {
	caps := s.mcpCapsLocked()
	var out []protocol.Customization
	for i := range s.b.cfg.MCPServers {
		m := &s.b.cfg.MCPServers[i]
		cz := &protocol.MCPServerCustomization{
			ID:   mcpCustomizationID(m.Name),
			URI:  "ahpd-mcp:" + m.Name,
			Name: m.Name,
			// The transport only: the command line, URL, environment
			// and headers may hold secrets.
			Meta: map[string]jsontext.Value{"transport": jsontext.Value(`"` + m.transport() + `"`)},
		}
		if e, ok := s.mcpEnablement[m.Name]; ok {
			cz.Enablement = e
		} else if m.Disabled {
			cz.Enablement = []protocol.CustomizationEnablement{&protocol.CustomizationEnablementGlobal{Enabled: false}}
		}
		switch {
		case !s.mcpEnabledLocked(m):
			cz.State = &protocol.MCPServerStoppedState{}
		case m.supported(caps) != "":
			cz.State = &protocol.MCPServerErrorState{Error: protocol.ErrorInfo{ErrorType: "unsupportedTransport", Message: m.supported(caps)}}
		case s.mcpLive[m.Name]:
			cz.State = &protocol.MCPServerReadyState{}
		default:
			cz.State = &protocol.MCPServerStartingState{}
		}
		out = append(out, cz)
	}
	return out
}

// mcpToggled takes a client's choice for a configured server. It applies
// from the next prompt of each chat.
func (s *session) mcpToggled(a *protocol.SessionCustomizationToggledAction) {
	name, ok := strings.CutPrefix(a.ID, "mcp-")
	if !ok || !slices.ContainsFunc(s.b.cfg.MCPServers, func(m MCPServer) bool { return m.Name == name }) {
		return
	}
	enablement := a.Enablement
	if enablement == nil && a.Enabled != nil {
		enablement = []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: *a.Enabled}}
	}
	s.mu.Lock()
	if s.mcpEnablement == nil {
		s.mcpEnablement = map[string][]protocol.CustomizationEnablement{}
		s.mcpChoice = map[string]bool{}
	}
	s.mcpEnablement[name] = enablement
	if len(enablement) > 0 {
		s.mcpChoice[name] = protocol.EnablementOn(enablement[0])
	} else {
		delete(s.mcpChoice, name)
	}
	memo := encodeMCPChoice(s.mcpChoice)
	s.custom = true
	s.flushSessionLocked()
	s.mu.Unlock()
	s.host.Remember(mcpMemoKey, memo)
}

// encodeMCPChoice writes the clients' choices as "name=1,other=0".
func encodeMCPChoice(choice map[string]bool) string {
	var parts []string
	for name, on := range choice {
		v := "0"
		if on {
			v = "1"
		}
		parts = append(parts, name+"="+v)
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

// restoreMCPChoice takes up the choices remembered before a restart, as
// session-scope decisions.
func (s *session) restoreMCPChoice(memo string) {
	if memo == "" {
		return
	}
	s.mcpEnablement = map[string][]protocol.CustomizationEnablement{}
	s.mcpChoice = map[string]bool{}
	for part := range strings.SplitSeq(memo, ",") {
		name, v, ok := strings.Cut(part, "=")
		if !ok || !slices.ContainsFunc(s.b.cfg.MCPServers, func(m MCPServer) bool { return m.Name == name }) {
			continue
		}
		s.mcpChoice[name] = v == "1"
		s.mcpEnablement[name] = []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: v == "1"}}
	}
}
