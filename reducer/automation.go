package reducer

import (
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// The reducers of the channels the 1.x era added: canvases (experimental)
// and automations. ahpd serves neither yet; clients and other hosts get
// the same pure reducers as for every other channel.

// Canvas applies a canvas-channel action: canvas/stateChanged replaces the
// whole state (CanvasStateChangedAction: full-replacement semantics).
func (r Reducer) Canvas(s *protocol.CanvasState, a protocol.StateAction) *protocol.CanvasState {
	if s == nil {
		return s
	}
	if a, ok := a.(*protocol.CanvasStateChangedAction); ok {
		next := a.Canvas
		return &next
	}
	return s
}

// Automation applies an action of the automation catalogue. automation/set
// replaces the entry with the same resource in place or appends it;
// automation/removed removes it (an unknown resource is a no-op). The
// create and update requests leave the catalogue unchanged: the host
// answers them with automation/set.
func (r Reducer) Automation(s *protocol.AutomationState, a protocol.StateAction) *protocol.AutomationState {
	if s == nil {
		return s
	}
	switch a := a.(type) {
	case *protocol.AutomationSetAction:
		next := *s
		i := slices.IndexFunc(s.Entries, func(e protocol.AutomationEntry) bool { return e.Resource == a.Automation.Resource })
		if i >= 0 {
			next.Entries = slices.Clone(s.Entries)
			next.Entries[i] = a.Automation
		} else {
			next.Entries = chatAppend(s.Entries, a.Automation)
		}
		return &next
	case *protocol.AutomationRemovedAction:
		i := slices.IndexFunc(s.Entries, func(e protocol.AutomationEntry) bool { return e.Resource == a.Resource })
		if i < 0 {
			return s
		}
		next := *s
		next.Entries = slices.Concat(s.Entries[:i], s.Entries[i+1:])
		if next.Entries == nil {
			next.Entries = []protocol.AutomationEntry{}
		}
		return &next
	}
	return s
}

// AutomationRun applies an action of one automation run. The lifecycle is
// replaced whole; sessions are a set in order (setting a linked one is a
// no-op, removing the primary one clears the primary); the primary session
// is set or, when the action has none, cleared. A cancel request leaves the
// state unchanged: the host answers it with a lifecycle change.
func (r Reducer) AutomationRun(s *protocol.AutomationRunState, a protocol.StateAction) *protocol.AutomationRunState {
	if s == nil {
		return s
	}
	switch a := a.(type) {
	case *protocol.AutomationRunLifecycleChangedAction:
		next := *s
		next.Lifecycle = a.Lifecycle
		return &next
	case *protocol.AutomationRunSessionSetAction:
		if slices.Contains(s.Sessions, a.Session) {
			return s
		}
		next := *s
		next.Sessions = chatAppend(s.Sessions, a.Session)
		return &next
	case *protocol.AutomationRunSessionRemovedAction:
		i := slices.Index(s.Sessions, a.Session)
		if i < 0 {
			return s
		}
		next := *s
		next.Sessions = slices.Concat(s.Sessions[:i], s.Sessions[i+1:])
		if next.Sessions == nil {
			next.Sessions = []protocol.URI{}
		}
		if s.PrimarySession != nil && *s.PrimarySession == a.Session {
			next.PrimarySession = nil
		}
		return &next
	case *protocol.AutomationRunPrimarySessionChangedAction:
		next := *s
		next.PrimarySession = a.PrimarySession
		return &next
	}
	return s
}
