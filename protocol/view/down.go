package view

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/reducer"
)

// This file converts 1.x values to the shapes of the versions before 0.9.0.
// Each function returns its argument unchanged when there is nothing to
// convert.

func downAction(a protocol.StateAction) protocol.StateAction {
	switch a := a.(type) {
	case *protocol.ChatErrorAction:
		if a.Part == nil {
			return a
		}
		out := *a
		info := a.Part.Error
		out.Error, out.Part = &info, nil
		return &out
	case *protocol.ChatTurnsLoadedAction:
		turns := downTurns(a.Turns)
		if sameSlice(turns, a.Turns) {
			return a
		}
		out := *a
		out.Turns = turns
		return &out
	case *protocol.ChatTurnStartedAction:
		if a.Message.Origin.Kind != protocol.MessageKindAutomation {
			return a
		}
		out := *a
		out.Message = downMessage(a.Message)
		return &out
	case *protocol.SessionCustomizationToggledAction:
		if a.Enablement == nil {
			return a
		}
		out := *a
		out.Enabled, out.Enablement = protocol.Ptr(reducer.EnabledBy(a.Enablement)), nil
		return &out
	case *protocol.SessionCustomizationsChangedAction:
		list := downCustomizations(a.Customizations)
		if sameSlice(list, a.Customizations) {
			return a
		}
		return &protocol.SessionCustomizationsChangedAction{Customizations: list}
	case *protocol.SessionCustomizationUpdatedAction:
		c := downCustomization(a.Customization)
		if c == a.Customization {
			return a
		}
		return &protocol.SessionCustomizationUpdatedAction{Customization: c}
	case *protocol.SessionChatAddedAction:
		if a.Summary.Movable == nil && a.Summary.Changes == nil {
			return a
		}
		return &protocol.SessionChatAddedAction{Summary: downChatSummary(a.Summary)}
	case *protocol.SessionActiveClientSetAction:
		if len(a.ActiveClient.Customizations) == 0 {
			return a
		}
		out := *a
		out.ActiveClient.Customizations = downClientPlugins(a.ActiveClient.Customizations)
		return &out
	case *protocol.SessionChatUpdatedAction:
		c := a.Changes
		if c.Movable == nil && c.Changes == nil {
			return a
		}
		out := *a
		out.Changes.Movable, out.Changes.Changes = nil, nil
		return &out
	case *protocol.AnnotationsSetAction:
		an := downAnnotation(a.Annotation)
		if an.Origin == a.Annotation.Origin {
			return a
		}
		return &protocol.AnnotationsSetAction{Annotation: an}
	case *protocol.AnnotationsUpdatedAction:
		if a.Origin == nil {
			return a
		}
		out := *a
		out.TurnID, out.Origin = a.Origin.TurnID, nil
		return &out
	case *protocol.TerminalClaimedAction:
		c := downClaim(a.Claim)
		if c == a.Claim {
			return a
		}
		return &protocol.TerminalClaimedAction{Claim: c}
	case *protocol.ChangesetStatusChangedAction:
		if a.Status != protocol.ChangesetStatusRecomputing {
			return a
		}
		out := *a
		out.Status = protocol.ChangesetStatusComputing
		return &out
	case *protocol.RootTerminalsChangedAction:
		list := downTerminals(a.Terminals)
		if sameSlice(list, a.Terminals) {
			return a
		}
		return &protocol.RootTerminalsChangedAction{Terminals: list}
	}
	return a
}

func downState(s protocol.SnapshotState) protocol.SnapshotState {
	switch s := s.(type) {
	case *protocol.ChatState:
		turns := downTurns(s.Turns)
		queued := downPending(s.QueuedMessages)
		if sameSlice(turns, s.Turns) && sameSlice(queued, s.QueuedMessages) && s.Movable == nil && s.Changes == nil &&
			s.Changesets == nil && s.BackgroundWork == nil && s.Canvases == nil && s.SteeringMessage == nil {
			return s
		}
		out := s.Clone()
		out.Turns, out.QueuedMessages = turns, queued
		out.Movable, out.Changes, out.Changesets, out.BackgroundWork, out.Canvases = nil, nil, nil, nil, nil
		if s.SteeringMessage != nil {
			m := *s.SteeringMessage
			m.Message = downMessage(m.Message)
			out.SteeringMessage = &m
		}
		return out
	case *protocol.SessionState:
		out := *s
		if s.Lifecycle == protocol.SessionLifecycleFailed {
			out.Lifecycle = protocol.SessionLifecycleCreationFailed
		}
		out.Origin = nil
		out.Config = downSessionConfig(s.Config)
		out.Customizations = downCustomizations(s.Customizations)
		if len(s.ActiveClients) > 0 {
			out.ActiveClients = make([]protocol.SessionActiveClient, len(s.ActiveClients))
			for i, c := range s.ActiveClients {
				if len(c.Customizations) > 0 {
					c.Customizations = downClientPlugins(c.Customizations)
				}
				out.ActiveClients[i] = c
			}
		}
		if len(s.Chats) > 0 {
			out.Chats = make([]protocol.ChatSummary, len(s.Chats))
			for i, c := range s.Chats {
				out.Chats[i] = downChatSummary(c)
			}
		}
		return &out
	case *protocol.TerminalState:
		out := *s
		out.ExitCode, out.Lifecycle = exitCodeOf(s.Lifecycle), nil
		out.Claim = downClaim(s.Claim)
		return &out
	case *protocol.RootState:
		list := downTerminals(s.Terminals)
		if sameSlice(list, s.Terminals) {
			return s
		}
		out := *s
		out.Terminals = list
		return &out
	case *protocol.ChangesetState:
		// recomputing is a 1.x status; older versions know a changeset
		// being worked on as computing.
		if s.Status != protocol.ChangesetStatusRecomputing {
			return s
		}
		out := *s
		out.Status = protocol.ChangesetStatusComputing
		return &out
	case *protocol.AnnotationsState:
		changed := false
		for _, a := range s.Annotations {
			changed = changed || a.Origin != nil
		}
		if !changed {
			return s
		}
		out := protocol.AnnotationsState{Annotations: make([]protocol.Annotation, len(s.Annotations))}
		for i, a := range s.Annotations {
			out.Annotations[i] = downAnnotation(a)
		}
		return &out
	}
	return s
}

// downTurns moves the error of failed turns from their last response part
// to Turn.error, where versions before 0.9.0 look for it.
func downTurns(turns []protocol.Turn) []protocol.Turn {
	return convertEach(turns, downTurn)
}

func downTurn(t protocol.Turn) (protocol.Turn, bool) {
	changed := false
	if n := len(t.ResponseParts); n > 0 {
		if p, ok := t.ResponseParts[n-1].(*protocol.ErrorResponsePart); ok {
			info := p.Error
			t.Error = &info
			t.ResponseParts = t.ResponseParts[: n-1 : n-1]
			changed = true
		}
	}
	if t.Message.Origin.Kind == protocol.MessageKindAutomation {
		t.Message = downMessage(t.Message)
		changed = true
	}
	return t, changed
}

// downMessage shows an automation's message as a user's: versions before
// 0.9.0 have no automation kind.
func downMessage(m protocol.Message) protocol.Message {
	if m.Origin.Kind == protocol.MessageKindAutomation {
		m.Origin.Kind = protocol.MessageKindUser
	}
	return m
}

func downPending(list []protocol.PendingMessage) []protocol.PendingMessage {
	for i, p := range list {
		if p.Message.Origin.Kind == protocol.MessageKindAutomation {
			out := append([]protocol.PendingMessage(nil), list...)
			for j := i; j < len(out); j++ {
				out[j].Message = downMessage(out[j].Message)
			}
			return out
		}
	}
	return list
}

func downSummary(s protocol.SessionSummary) protocol.SessionSummary {
	s.Chats, s.DefaultChat, s.Origin = nil, nil, nil
	return s
}

func downSummaryChanges(c protocol.SessionSummaryChangedParamsChanges) protocol.SessionSummaryChangedParamsChanges {
	c.Chats, c.DefaultChat, c.Origin = nil, nil, nil
	if len(c.Cleared) > 0 {
		var kept []string
		for _, m := range c.Cleared {
			if m != "chats" && m != "defaultChat" && m != "origin" {
				kept = append(kept, m)
			}
		}
		c.Cleared = kept
	}
	return c
}

func downChatSummary(c protocol.ChatSummary) protocol.ChatSummary {
	c.Movable, c.Changes = nil, nil
	return c
}

func downAnnotation(a protocol.Annotation) protocol.Annotation {
	if a.Origin == nil {
		return a
	}
	a.TurnID, a.Origin = a.Origin.TurnID, nil
	return a
}

// downClaim drops the chat of a session claim, which versions before 0.9.0
// do not know.
func downClaim(c protocol.TerminalClaim) protocol.TerminalClaim {
	if s, ok := c.(*protocol.TerminalSessionClaim); ok && s.Chat != nil {
		out := *s
		out.Chat = nil
		return &out
	}
	return c
}

func downTerminals(list []protocol.TerminalInfo) []protocol.TerminalInfo {
	if len(list) == 0 {
		return list
	}
	out := make([]protocol.TerminalInfo, len(list))
	for i, t := range list {
		t.ExitCode, t.Lifecycle = exitCodeOf(t.Lifecycle), nil
		t.Claim = downClaim(t.Claim)
		out[i] = t
	}
	return out
}

// exitCodeOf is what versions before 0.9.0 report of a terminal's
// lifecycle: the exit code once it exited with one.
func exitCodeOf(l protocol.TerminalLifecycleState) *int64 {
	if e, ok := l.(*protocol.TerminalExitedLifecycleState); ok {
		return e.ExitCode
	}
	return nil
}

func downCustomizations(list []protocol.Customization) []protocol.Customization {
	return convertEach(list, func(c protocol.Customization) (protocol.Customization, bool) {
		d := downCustomization(c)
		return d, d != c
	})
}

// downCustomization turns enablement decisions into the enabled flag of
// versions before 0.9.0: the decisive (first) decision, enabled when
// there is none.
func downCustomization(c protocol.Customization) protocol.Customization {
	switch c := c.(type) {
	case *protocol.PluginCustomization:
		out := *c
		out.Enabled, out.Enablement = protocol.Ptr(reducer.EnabledBy(c.Enablement)), nil
		return &out
	case *protocol.MCPServerCustomization:
		out := *c
		out.Enabled, out.Enablement = protocol.Ptr(reducer.EnabledBy(c.Enablement)), nil
		return &out
	}
	return c
}

func downClientPlugins(list []protocol.ClientPluginCustomization) []protocol.ClientPluginCustomization {
	out := make([]protocol.ClientPluginCustomization, len(list))
	for i, c := range list {
		c.Enabled, c.Enablement, c.ChildEnablement = protocol.Ptr(reducer.EnabledBy(c.Enablement)), nil, nil
		out[i] = c
	}
	return out
}

// legacyAuthRequired is auth/required as versions before 0.9.0 send it:
// the resource is its identifier, not its metadata.
type legacyAuthRequired struct{ p *protocol.AuthRequiredParams }

func (l *legacyAuthRequired) MarshalJSONTo(enc *jsontext.Encoder) error {
	type wire struct {
		Channel  string                       `json:"channel"`
		Resource string                       `json:"resource"`
		Reason   *protocol.AuthRequiredReason `json:"reason,omitempty"`
	}
	raw, err := protocol.Marshal(wire{Channel: l.p.Channel, Resource: l.p.Resource.Resource, Reason: l.p.Reason})
	if err != nil {
		return err
	}
	return enc.WriteValue(raw)
}

// convertEach returns list with each element passed through conv, which
// also reports whether it changed the element. The result is list itself
// when conv changed nothing, and a new slice otherwise: list is never
// written, since states are shared.
func convertEach[T any](list []T, conv func(T) (T, bool)) []T {
	var out []T
	for i, x := range list {
		y, changed := conv(x)
		if !changed && out == nil {
			continue
		}
		if out == nil {
			out = append(make([]T, 0, len(list)), list[:i]...)
		}
		out = append(out, y)
	}
	if out == nil {
		return list
	}
	return out
}

// sameSlice reports whether two slices share their backing array and
// length, that is whether a conversion returned its input.
func sameSlice[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
