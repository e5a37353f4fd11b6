package reducer

import "github.com/ahp-go/ahp/protocol"

// Root returns the root state after applying a, one of the root/* actions.
// Any other action, including *protocol.Unknown, returns s itself.
//
// The session catalogue is not part of the root state: the root/session*
// notifications that keep it current are not actions and never reach this
// reducer.
func (r Reducer) Root(s *protocol.RootState, a protocol.StateAction) *protocol.RootState {
	if s == nil {
		return s
	}
	switch a := a.(type) {
	case *protocol.RootAgentsChangedAction:
		return rootAgentsChanged(s, a)
	case *protocol.RootActiveSessionsChangedAction:
		return rootActiveSessionsChanged(s, a)
	case *protocol.RootTerminalsChangedAction:
		return rootTerminalsChanged(s, a)
	case *protocol.RootConfigChangedAction:
		return rootConfigChanged(s, a)
	}
	return s
}

// rootAgentsChanged replaces the list of agents.
func rootAgentsChanged(s *protocol.RootState, a *protocol.RootAgentsChangedAction) *protocol.RootState {
	next := *s
	next.Agents = a.Agents
	return &next
}

// rootActiveSessionsChanged replaces the count of live sessions.
func rootActiveSessionsChanged(s *protocol.RootState, a *protocol.RootActiveSessionsChangedAction) *protocol.RootState {
	next := *s
	next.ActiveSessions = protocol.Ptr(a.ActiveSessions)
	return &next
}

// rootTerminalsChanged replaces the terminal catalogue.
func rootTerminalsChanged(s *protocol.RootState, a *protocol.RootTerminalsChangedAction) *protocol.RootState {
	next := *s
	next.Terminals = a.Terminals
	return &next
}

// rootConfigChanged merges new values into the host configuration, or
// replaces them all when the action says so. A host without a
// configuration is left alone.
func rootConfigChanged(s *protocol.RootState, a *protocol.RootConfigChangedAction) *protocol.RootState {
	if s.Config == nil {
		return s
	}
	config := *s.Config
	config.Values = sessionMergeConfigValues(config.Values, a.Config, a.Replace != nil && *a.Replace)
	next := *s
	next.Config = &config
	return &next
}
