package view

import (
	"github.com/ahp-go/ahp/protocol"
)

// This file converts values of the versions before 0.9.0 to 1.x shapes:
// what a host does with an older client's actions before validating them,
// and what a client does with what an older host sends. Like the
// conversions down, they never modify their input.

// UpAction returns an action the version sent on channel in its 1.x shape.
func (v *View) UpAction(channel string, a protocol.StateAction) protocol.StateAction {
	if !v.legacy {
		return a
	}
	switch a := a.(type) {
	case *protocol.ChatErrorAction:
		if a.Error == nil || a.Part != nil {
			return a
		}
		out := *a
		out.Part, out.Error = &protocol.ErrorResponsePart{Error: *a.Error}, nil
		return &out
	case *protocol.ChatTurnsLoadedAction:
		out := *a
		out.Turns = upTurns(a.Turns)
		return &out
	case *protocol.SessionCustomizationToggledAction:
		if a.Enabled == nil || a.Enablement != nil {
			return a
		}
		// A toggle in an older version is one explicit decision for this
		// session.
		out := *a
		out.Enablement = []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: *a.Enabled}}
		out.Enabled = nil
		return &out
	case *protocol.SessionCustomizationsChangedAction:
		return &protocol.SessionCustomizationsChangedAction{Customizations: upCustomizations(a.Customizations)}
	case *protocol.SessionCustomizationUpdatedAction:
		return &protocol.SessionCustomizationUpdatedAction{Customization: upCustomization(a.Customization)}
	case *protocol.SessionActiveClientSetAction:
		if len(a.ActiveClient.Customizations) == 0 {
			return a
		}
		out := *a
		out.ActiveClient.Customizations = upClientPlugins(a.ActiveClient.Customizations)
		return &out
	case *protocol.AnnotationsSetAction:
		return &protocol.AnnotationsSetAction{Annotation: upAnnotation(channel, a.Annotation)}
	case *protocol.AnnotationsUpdatedAction:
		if a.TurnID == nil || a.Origin != nil {
			return a
		}
		out := *a
		out.Origin = &protocol.AnnotationOrigin{Session: sessionOf(channel), TurnID: a.TurnID}
		out.TurnID = nil
		return &out
	// changeset/contentChanged keeps an older version's error member: 1.x
	// reports the failure with changeset/statusChanged instead, and the
	// reducer applies the error only when an older producer sent one.
	case *protocol.RootTerminalsChangedAction:
		return &protocol.RootTerminalsChangedAction{Terminals: upTerminals(a.Terminals)}
	}
	return a
}

// UpEnvelope returns env with its action in its 1.x shape.
func (v *View) UpEnvelope(env *protocol.ActionEnvelope) *protocol.ActionEnvelope {
	a := v.UpAction(env.Channel, env.Action)
	if a == env.Action {
		return env
	}
	out := *env
	out.Action = a
	return &out
}

// UpState returns the state of channel, as the version sent it, in its
// 1.x shape.
func (v *View) UpState(channel string, s protocol.SnapshotState) protocol.SnapshotState {
	if !v.legacy {
		return s
	}
	if v.shape >= Shape06 {
		s = up06State(s)
	}
	switch s := s.(type) {
	case *protocol.ChatState:
		out := s.Clone()
		out.Turns = upTurns(s.Turns)
		return out
	case *protocol.SessionState:
		out := *s
		if s.Lifecycle == protocol.SessionLifecycleCreationFailed {
			out.Lifecycle = protocol.SessionLifecycleFailed
		}
		out.Customizations = upCustomizations(s.Customizations)
		if len(s.ActiveClients) > 0 {
			out.ActiveClients = make([]protocol.SessionActiveClient, len(s.ActiveClients))
			for i, c := range s.ActiveClients {
				if len(c.Customizations) > 0 {
					c.Customizations = upClientPlugins(c.Customizations)
				}
				out.ActiveClients[i] = c
			}
		}
		return &out
	case *protocol.TerminalState:
		if s.Lifecycle != nil {
			return s
		}
		out := *s
		out.Lifecycle, out.ExitCode = lifecycleOf(s.ExitCode), nil
		return &out
	case *protocol.RootState:
		out := *s
		out.Terminals = upTerminals(s.Terminals)
		return &out
	case *protocol.AnnotationsState:
		out := protocol.AnnotationsState{Annotations: make([]protocol.Annotation, len(s.Annotations))}
		for i, a := range s.Annotations {
			out.Annotations[i] = upAnnotation(channel, a)
		}
		return &out
	}
	return s
}

// UpSnapshots returns snapshots the version sent in their 1.x shapes.
func (v *View) UpSnapshots(snaps []protocol.Snapshot) []protocol.Snapshot {
	if !v.legacy {
		return snaps
	}
	out := make([]protocol.Snapshot, len(snaps))
	for i, s := range snaps {
		s.State = v.UpState(s.Resource, s.State)
		out[i] = s
	}
	return out
}

// UpTurns returns completed turns the version sent in their 1.x shape.
func (v *View) UpTurns(turns []protocol.Turn) []protocol.Turn {
	if !v.legacy {
		return turns
	}
	return upTurns(turns)
}

// UpError returns an error the version sent with its 1.x code.
func (v *View) UpError(e *protocol.Error) *protocol.Error {
	if !v.legacy || e == nil || e.Code != protocol.CodeContentNotFound {
		return e
	}
	out := *e
	out.Code = protocol.CodeNotFound
	return &out
}

// UpMissing returns what is really missing from an action the version
// sent, given the members its decoding found absent (m's paths are below
// the dispatchAction params, "action.part") and the action after UpAction:
// members 1.x requires that the older shape does not have are missing only
// when UpAction could not supply them. It returns nil when nothing is.
func (v *View) UpMissing(m *protocol.MissingError, up protocol.StateAction) error {
	if m == nil {
		return nil
	}
	if !v.legacy {
		return m
	}
	return m.Without(func(path string) bool {
		switch path {
		case "action.part":
			a, ok := up.(*protocol.ChatErrorAction)
			return ok && a.Part != nil
		case "action.enablement":
			a, ok := up.(*protocol.SessionCustomizationToggledAction)
			return ok && a.Enablement != nil
		case "action.annotation.origin":
			a, ok := up.(*protocol.AnnotationsSetAction)
			return ok && a.Annotation.Origin != nil
		case "action.claim.chat":
			// Older versions name no chat in a terminal claim, and the
			// claim cannot tell which one.
			return true
		}
		return false
	})
}

func upTurns(turns []protocol.Turn) []protocol.Turn {
	return convertEach(turns, func(t protocol.Turn) (protocol.Turn, bool) {
		if t.Error == nil {
			return t, false
		}
		parts := make([]protocol.ResponsePart, 0, len(t.ResponseParts)+1)
		parts = append(parts, t.ResponseParts...)
		t.ResponseParts = append(parts, &protocol.ErrorResponsePart{Error: *t.Error})
		t.Error = nil
		return t, true
	})
}

func upAnnotation(channel string, a protocol.Annotation) protocol.Annotation {
	if a.Origin != nil {
		return a
	}
	a.Origin = &protocol.AnnotationOrigin{Session: sessionOf(channel), TurnID: a.TurnID}
	a.TurnID = nil
	return a
}

// sessionOf returns the session URI of a channel below a session (such as
// its annotations), or "" when it is not one.
func sessionOf(channel string) string {
	c, err := protocol.ParseChannel(channel)
	if err != nil {
		return ""
	}
	return c.SessionURI()
}

func upTerminals(list []protocol.TerminalInfo) []protocol.TerminalInfo {
	if len(list) == 0 {
		return list
	}
	out := make([]protocol.TerminalInfo, len(list))
	for i, t := range list {
		if t.Lifecycle == nil {
			t.Lifecycle, t.ExitCode = lifecycleOf(t.ExitCode), nil
		}
		out[i] = t
	}
	return out
}

// lifecycleOf is the lifecycle an older version's exit code stands for: a
// terminal with an exit code has exited, one without is running (older
// versions cannot tell an exit without a code from a running process).
func lifecycleOf(exitCode *int64) protocol.TerminalLifecycleState {
	if exitCode != nil {
		return &protocol.TerminalExitedLifecycleState{ExitCode: exitCode}
	}
	return &protocol.TerminalRunningLifecycleState{}
}

func upCustomizations(list []protocol.Customization) []protocol.Customization {
	if len(list) == 0 {
		return list
	}
	out := make([]protocol.Customization, len(list))
	for i, c := range list {
		out[i] = upCustomization(c)
	}
	return out
}

// upCustomization turns an older version's enabled flag into enablement
// decisions: none when enabled (the default), one for the session when not.
func upCustomization(c protocol.Customization) protocol.Customization {
	switch c := c.(type) {
	case *protocol.PluginCustomization:
		if c.Enabled == nil {
			return c
		}
		out := *c
		out.Enablement, out.Enabled = decisions(*c.Enabled), nil
		return &out
	case *protocol.MCPServerCustomization:
		if c.Enabled == nil {
			return c
		}
		out := *c
		out.Enablement, out.Enabled = decisions(*c.Enabled), nil
		return &out
	}
	return c
}

func decisions(enabled bool) []protocol.CustomizationEnablement {
	if enabled {
		return nil
	}
	return []protocol.CustomizationEnablement{&protocol.CustomizationEnablementSession{Enabled: false}}
}

// upClientPlugins turns the enabled flag of a client's plugins into the
// client's global decision, which 1.x clients always publish.
func upClientPlugins(list []protocol.ClientPluginCustomization) []protocol.ClientPluginCustomization {
	out := make([]protocol.ClientPluginCustomization, len(list))
	for i, c := range list {
		if c.Enabled != nil && c.Enablement == nil {
			c.Enablement = []protocol.CustomizationEnablement{&protocol.CustomizationEnablementGlobal{Enabled: *c.Enabled}}
			c.Enabled = nil
		}
		out[i] = c
	}
	return out
}
