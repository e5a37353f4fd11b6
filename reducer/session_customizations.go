package reducer

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// The session's customizations form a shallow tree: top-level entries
// (plugins, directories and bare MCP servers) and, inside the two container
// kinds, a list of children. Customization ids are unique within a
// session; actions look an id up among the top-level entries first, then
// among the children of each container in order.

// sessionCustomizationsChanged replaces the whole top-level list.
func sessionCustomizationsChanged(s *protocol.SessionState, a *protocol.SessionCustomizationsChangedAction) *protocol.SessionState {
	next := *s
	next.Customizations = a.Customizations
	return &next
}

// sessionCustomizationUpdated replaces the top-level entry with the same id,
// children and all, or appends the entry when there is none.
func sessionCustomizationUpdated(s *protocol.SessionState, a *protocol.SessionCustomizationUpdatedAction) *protocol.SessionState {
	if a.Customization == nil {
		return s
	}
	id := sessionCustomizationID(a.Customization)
	next := *s
	next.Customizations = sessionUpsert(s.Customizations, a.Customization, func(c protocol.Customization) bool {
		return sessionCustomizationID(c) == id
	})
	return &next
}

// sessionCustomizationRemoved removes a customization by id: a top-level
// entry goes with its children, a child leaves its container in place.
func sessionCustomizationRemoved(s *protocol.SessionState, a *protocol.SessionCustomizationRemovedAction) *protocol.SessionState {
	if i := sessionTopIndex(s.Customizations, a.ID); i >= 0 {
		next := *s
		next.Customizations = sessionDelete(s.Customizations, i)
		return &next
	}
	i, j := sessionChildIndex(s.Customizations, a.ID)
	if i < 0 {
		return s
	}
	children := sessionDelete(sessionChildren(s.Customizations[i]), j)
	next := *s
	next.Customizations = sessionReplace(s.Customizations, i, sessionWithChildren(s.Customizations[i], children))
	return &next
}

// sessionCustomizationToggled sets the enabled flag of a top-level entry or
// of a child. An entry of a kind this package does not know cannot be
// changed and is left as it is.
func sessionCustomizationToggled(s *protocol.SessionState, a *protocol.SessionCustomizationToggledAction) *protocol.SessionState {
	if i := sessionTopIndex(s.Customizations, a.ID); i >= 0 {
		c, ok := sessionSetEnabled(s.Customizations[i], a)
		if !ok {
			return s
		}
		next := *s
		next.Customizations = sessionReplace(s.Customizations, i, c)
		return &next
	}
	i, j := sessionChildIndex(s.Customizations, a.ID)
	if i < 0 {
		return s
	}
	children := sessionChildren(s.Customizations[i])
	child, ok := sessionSetChildEnabled(children[j], a)
	if !ok {
		return s
	}
	container := sessionWithChildren(s.Customizations[i], sessionReplace(children, j, child))
	next := *s
	next.Customizations = sessionReplace(s.Customizations, i, container)
	return &next
}

// sessionMcpServerStateChanged records the runtime state the host reports
// for an MCP server, with its side channel; an action without a channel
// clears it.
func sessionMcpServerStateChanged(s *protocol.SessionState, a *protocol.SessionMCPServerStateChangedAction) *protocol.SessionState {
	if a.State == nil {
		return s
	}
	return sessionUpdateMcpServer(s, a.ID, a.State, a.Channel)
}

// sessionMcpServerStartRequested optimistically moves an MCP server to
// starting and drops its stale channel; the host follows with the real
// state.
func sessionMcpServerStartRequested(s *protocol.SessionState, a *protocol.SessionMCPServerStartRequestedAction) *protocol.SessionState {
	return sessionUpdateMcpServer(s, a.ID, &protocol.MCPServerStartingState{}, nil)
}

// sessionMcpServerStopRequested optimistically moves an MCP server to
// stopped and drops its channel.
func sessionMcpServerStopRequested(s *protocol.SessionState, a *protocol.SessionMCPServerStopRequestedAction) *protocol.SessionState {
	return sessionUpdateMcpServer(s, a.ID, &protocol.MCPServerStoppedState{}, nil)
}

// sessionMcpServerBackgroundRequested stops a starting MCP server from
// blocking messages (SessionMcpServerBackgroundRequestedAction): blocking
// becomes false when the server is starting with blocking true; anything
// else is a no-op.
func sessionMcpServerBackgroundRequested(s *protocol.SessionState, a *protocol.SessionMCPServerBackgroundRequestedAction) *protocol.SessionState {
	m := sessionFindMcpServer(s.Customizations, a.ID)
	if m == nil {
		return s
	}
	st, ok := m.State.(*protocol.MCPServerStartingState)
	if !ok || st.Blocking == nil || !*st.Blocking {
		return s
	}
	return sessionUpdateMcpServer(s, a.ID, &protocol.MCPServerStartingState{Blocking: protocol.Ptr(false)}, m.Channel)
}

// sessionFindMcpServer returns the MCP server with the given id, at the top
// level or inside a container, or nil.
func sessionFindMcpServer(list []protocol.Customization, id string) *protocol.MCPServerCustomization {
	if i := sessionTopIndex(list, id); i >= 0 {
		m, _ := list[i].(*protocol.MCPServerCustomization)
		return m
	}
	i, j := sessionChildIndex(list, id)
	if i < 0 {
		return nil
	}
	m, _ := sessionChildren(list[i])[j].(*protocol.MCPServerCustomization)
	return m
}

// sessionUpdateMcpServer sets the state and channel of the MCP server with
// the given id, at the top level or inside a container. An id that belongs
// to a customization of another kind changes nothing.
func sessionUpdateMcpServer(s *protocol.SessionState, id string, state protocol.MCPServerState, channel *protocol.URI) *protocol.SessionState {
	update := func(m *protocol.MCPServerCustomization) *protocol.MCPServerCustomization {
		n := *m
		n.State = state
		n.Channel = channel
		return &n
	}
	if i := sessionTopIndex(s.Customizations, id); i >= 0 {
		m, ok := s.Customizations[i].(*protocol.MCPServerCustomization)
		if !ok {
			return s
		}
		next := *s
		next.Customizations = sessionReplace[protocol.Customization](s.Customizations, i, update(m))
		return &next
	}
	i, j := sessionChildIndex(s.Customizations, id)
	if i < 0 {
		return s
	}
	children := sessionChildren(s.Customizations[i])
	m, ok := children[j].(*protocol.MCPServerCustomization)
	if !ok {
		return s
	}
	container := sessionWithChildren(s.Customizations[i], sessionReplace[protocol.ChildCustomization](children, j, update(m)))
	next := *s
	next.Customizations = sessionReplace(s.Customizations, i, container)
	return &next
}

// sessionTopIndex returns the index of the top-level customization with the
// given id, or -1.
func sessionTopIndex(list []protocol.Customization, id string) int {
	return slices.IndexFunc(list, func(c protocol.Customization) bool { return sessionCustomizationID(c) == id })
}

// sessionChildIndex finds the child with the given id: i indexes its
// container in list and j the child among the container's children. Both
// are -1 when no container holds such a child.
func sessionChildIndex(list []protocol.Customization, id string) (i, j int) {
	for i, c := range list {
		j := slices.IndexFunc(sessionChildren(c), func(c protocol.ChildCustomization) bool { return sessionChildID(c) == id })
		if j >= 0 {
			return i, j
		}
	}
	return -1, -1
}

// sessionCustomizationID returns the id of a top-level customization.
func sessionCustomizationID(c protocol.Customization) string {
	switch c := c.(type) {
	case *protocol.PluginCustomization:
		return c.ID
	case *protocol.DirectoryCustomization:
		return c.ID
	case *protocol.MCPServerCustomization:
		return c.ID
	case *protocol.Unknown:
		return sessionUnknownKeys(c).ID
	}
	return ""
}

// sessionChildID returns the id of a child customization.
func sessionChildID(c protocol.ChildCustomization) string {
	switch c := c.(type) {
	case *protocol.AgentCustomization:
		return c.ID
	case *protocol.SkillCustomization:
		return c.ID
	case *protocol.PromptCustomization:
		return c.ID
	case *protocol.RuleCustomization:
		return c.ID
	case *protocol.HookCustomization:
		return c.ID
	case *protocol.MCPServerCustomization:
		return c.ID
	case *protocol.Unknown:
		return sessionUnknownKeys(c).ID
	}
	return ""
}

// sessionChildren returns the children of a container customization, and
// nil for any other kind.
func sessionChildren(c protocol.Customization) []protocol.ChildCustomization {
	switch c := c.(type) {
	case *protocol.PluginCustomization:
		return c.Children
	case *protocol.DirectoryCustomization:
		return c.Children
	}
	return nil
}

// sessionWithChildren returns a copy of container c holding children
// instead. c must be a container (see sessionChildren).
func sessionWithChildren(c protocol.Customization, children []protocol.ChildCustomization) protocol.Customization {
	switch c := c.(type) {
	case *protocol.PluginCustomization:
		n := *c
		n.Children = children
		return &n
	case *protocol.DirectoryCustomization:
		n := *c
		n.Children = children
		return &n
	}
	return c
}

// toggledEnabled is the enabled flag a toggle sets on entries that keep a
// flag rather than decisions: the decisive (first) decision, enabled when
// there is none; or an older version's enabled member.
func toggledEnabled(a *protocol.SessionCustomizationToggledAction) bool {
	if a.Enablement == nil && a.Enabled != nil {
		return *a.Enabled
	}
	return EnabledBy(a.Enablement)
}

// EnabledBy is the enabled value of enablement decisions: the first (most
// specific) one, enabled when there is none. It is also the enabled flag
// versions before 0.9.0 show for them.
func EnabledBy(list []protocol.CustomizationEnablement) bool {
	if len(list) == 0 {
		return true
	}
	switch d := list[0].(type) {
	case *protocol.CustomizationEnablementSession:
		return d.Enabled
	case *protocol.CustomizationEnablementWorkspace:
		return d.Enabled
	case *protocol.CustomizationEnablementGlobal:
		return d.Enabled
	}
	return true
}

// toggledEnablement is the decision list a toggle gives plugins and MCP
// servers, which keep decisions (the list replaces the previous one
// entirely); an older version's flag is one decision for the session.
func toggledEnablement(a *protocol.SessionCustomizationToggledAction) []protocol.CustomizationEnablement {
	if a.Enablement == nil && a.Enabled != nil {
		return []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: *a.Enabled}}
	}
	if a.Enablement == nil {
		return []protocol.CustomizationEnablement{}
	}
	return a.Enablement
}

// sessionSetEnabled returns a copy of a top-level customization with its
// enabled flag set; ok is false for a kind this package does not know.
func sessionSetEnabled(c protocol.Customization, a *protocol.SessionCustomizationToggledAction) (_ protocol.Customization, ok bool) {
	enabled := toggledEnabled(a)
	switch c := c.(type) {
	case *protocol.PluginCustomization:
		n := *c
		n.Enablement, n.Enabled = toggledEnablement(a), nil
		return &n, true
	case *protocol.DirectoryCustomization:
		n := *c
		n.Enabled = enabled
		return &n, true
	case *protocol.MCPServerCustomization:
		n := *c
		n.Enablement, n.Enabled = toggledEnablement(a), nil
		return &n, true
	}
	return c, false
}

// sessionSetChildEnabled returns a copy of a child customization with its
// enabled flag set; ok is false for a kind this package does not know.
// Leaf children store the flag as optional (absent means enabled); once
// toggled it is always written.
func sessionSetChildEnabled(c protocol.ChildCustomization, a *protocol.SessionCustomizationToggledAction) (_ protocol.ChildCustomization, ok bool) {
	enabled := toggledEnabled(a)
	switch c := c.(type) {
	case *protocol.AgentCustomization:
		n := *c
		n.Enabled = &enabled
		return &n, true
	case *protocol.SkillCustomization:
		n := *c
		n.Enabled = &enabled
		return &n, true
	case *protocol.PromptCustomization:
		n := *c
		n.Enabled = &enabled
		return &n, true
	case *protocol.RuleCustomization:
		n := *c
		n.Enabled = &enabled
		return &n, true
	case *protocol.HookCustomization:
		n := *c
		n.Enabled = &enabled
		return &n, true
	case *protocol.MCPServerCustomization:
		n := *c
		n.Enablement, n.Enabled = toggledEnablement(a), nil
		return &n, true
	}
	return c, false
}
