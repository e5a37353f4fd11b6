// Package view shows the protocol's 1.x values as a connection's negotiated
// version sees them, and brings an older version's values up to 1.x.
//
// A host keeps one 1.x-shaped state. Every value it sends a connection goes
// through the connection's View (its actions, snapshots, session summaries,
// notifications and errors), and every action a connection sends comes up
// through it before validation. A client that negotiated an older version
// with its host does the reverse. All the conversions between shapes live
// here, one function per changed shape, so that each is written and tested
// once.
//
// The versions fall in two groups. The 1.x era (0.9.0 and later, including
// 0.10.0 and 1.x) shares the 1.x shapes, and its views change nothing: what
// differs between those versions is only which actions and notifications
// they know. Versions 0.5.1 to 0.8.0, which the 0.8.0 pack describes, see
// the older shapes:
//
//   - chat/error carries error instead of an error response part, and a
//     failed turn keeps its error in Turn.error instead of a last response
//     part;
//   - a failed session's lifecycle is creationFailed instead of failed;
//   - a terminal reports exitCode instead of lifecycle, and a session's
//     terminal claim has no chat;
//   - customizations carry enabled instead of enablement decisions;
//   - an annotation names its turnId instead of an origin;
//   - auth/required names its resource by URI instead of by metadata;
//   - the error codes -32011 (Conflict) and -32006 differ;
//   - messages of kind automation do not exist;
//   - members added in the 1.x era (SessionSummary.chats, defaultChat and
//     origin, ChatSummary.movable and changes, the chat's background work,
//     canvases and changesets, InitializeResult._meta, ...) are left out.
//
// Versions 0.5.x and 0.6.x, before multiroot sessions (0.7.0), also name
// one workingDirectory instead of a list of workingDirectories; and 0.5.x
// keeps a chat's open input requests in ChatState.inputRequests rather
// than in the active turn's response parts (0.6.0). The two 0.5 versions
// record input requests differently: 0.5.2 appends a resolved request to
// its turn as an inputRequest part, 0.5.1 (before that part existed)
// records nothing; neither keeps a request the turn ended without
// answering, which 0.6.0 and later keep unresolved in the completed turn.
//
// Conversions never modify their input: host states are shared by every
// reader. A value that needs no change is returned as it is (the same
// pointer), so callers can tell cheaply that a shape did not change and
// share its encoding.
package view

import (
	"github.com/ahp-go/ahp/protocol"
)

// A View converts values for one negotiated protocol version. Views are
// immutable and safe for concurrent use.
type View struct {
	version string
	legacy  bool  // a version before 0.9.0: the 0.8.0 pack's shapes
	shape   Shape // which of them
}

// Current is the view of the 1.x era's versions, which changes nothing.
var Current = &View{version: protocol.ProtocolVersion}

// For returns the view of a negotiated version. A version that does not
// parse gets the current view.
func For(version string) *View {
	v, err := protocol.ParseVersion(version)
	if err != nil || !v.Legacy() {
		if version == protocol.ProtocolVersion {
			return Current
		}
		return &View{version: version}
	}
	shape := Shape08
	switch {
	case v.Minor < 5 || v.Minor == 5 && v.Patch < 2:
		shape = Shape051
	case v.Minor == 5:
		shape = Shape05
	case v.Minor == 6:
		shape = Shape06
	}
	return &View{version: version, legacy: true, shape: shape}
}

// Shape names the set of shapes a view shows. Views of different versions
// with the same Shape convert every value alike (they differ only in which
// actions and notifications they know), so a sender can encode a value once
// per Shape.
type Shape uint8

const (
	// ShapeCurrent is the 1.x era's shapes: nothing is converted.
	ShapeCurrent Shape = iota
	// Shape08 is the shapes of 0.7.0 to 0.8.x, which the 0.8.0 pack
	// describes.
	Shape08
	// Shape06 is Shape08 with one workingDirectory for the list (0.6.x).
	Shape06
	// Shape05 is Shape06 with open input requests in
	// ChatState.inputRequests, and only resolved ones recorded in the
	// turn's parts (0.5.2).
	Shape05
	// Shape051 is Shape05 without inputRequest parts at all: 0.5.1 records
	// no resolved input request.
	Shape051

	// Shapes is the number of sets of shapes, for arrays indexed by Shape.
	Shapes = iota
)

// Shape returns the set of shapes the view shows.
func (v *View) Shape() Shape { return v.shape }

// Version returns the negotiated version the view is for.
func (v *View) Version() string { return v.version }

// Legacy reports whether the version predates 0.9.0 and sees the older
// shapes. A view that is not legacy returns every value unchanged.
func (v *View) Legacy() bool { return v.legacy }

// KnowsAction reports whether the version knows the action type.
func (v *View) KnowsAction(actionType string) bool {
	return protocol.ActionKnownToVersion(actionType, v.version)
}

// KnowsNotification reports whether the version knows the server
// notification.
func (v *View) KnowsNotification(method string) bool {
	return protocol.NotificationKnownToVersion(method, v.version)
}

// Action returns a as the version sees it. Whether the version knows the
// action at all is KnowsAction's to say.
func (v *View) Action(a protocol.StateAction) protocol.StateAction {
	if !v.legacy {
		return a
	}
	a = downAction(a)
	if v.shape >= Shape06 {
		a = down06Action(a, v.shape)
	}
	return a
}

// Envelope returns env with its action as the version sees it; env itself
// when the action is unchanged.
func (v *View) Envelope(env *protocol.ActionEnvelope) *protocol.ActionEnvelope {
	a := v.Action(env.Action)
	if a == env.Action {
		return env
	}
	out := *env
	out.Action = a
	return &out
}

// State returns a channel state as the version sees it.
func (v *View) State(s protocol.SnapshotState) protocol.SnapshotState {
	if !v.legacy {
		return s
	}
	s = downState(s)
	if v.shape >= Shape06 {
		s = down06State(s, v.shape)
	}
	return s
}

// Snapshots returns snapshots as the version sees them, sharing the slice
// when nothing changes.
func (v *View) Snapshots(snaps []protocol.Snapshot) []protocol.Snapshot {
	if !v.legacy {
		return snaps
	}
	return convertEach(snaps, func(s protocol.Snapshot) (protocol.Snapshot, bool) {
		st := v.State(s.State)
		changed := st != s.State
		s.State = st
		return s, changed
	})
}

// Turns returns completed turns as the version sees them.
func (v *View) Turns(turns []protocol.Turn) []protocol.Turn {
	if !v.legacy {
		return turns
	}
	turns = downTurns(turns)
	if v.shape >= Shape05 {
		turns = down05Turns(turns, v.shape)
	}
	return turns
}

// Summaries returns session summaries as the version sees them.
func (v *View) Summaries(list []protocol.SessionSummary) []protocol.SessionSummary {
	if !v.legacy {
		return list
	}
	out := make([]protocol.SessionSummary, len(list))
	for i, s := range list {
		out[i] = v.Summary(s)
	}
	return out
}

// Summary returns one session summary as the version sees it.
func (v *View) Summary(s protocol.SessionSummary) protocol.SessionSummary {
	if !v.legacy {
		return s
	}
	s = downSummary(s)
	if v.shape >= Shape06 {
		s.WorkingDirectory, s.WorkingDirectories = first(s.WorkingDirectories), nil
	}
	return s
}

// InitializeResult returns the result of initialize as the version sees
// it, without the members older versions do not know. Its snapshots are
// left as they are: they go through State when they are taken.
func (v *View) InitializeResult(r *protocol.InitializeResult) *protocol.InitializeResult {
	if !v.legacy {
		return r
	}
	out := *r
	out.Meta = nil
	out.Automations = nil
	out.TCPConnections = nil
	return &out
}

// Notification returns the params of a server notification as the version
// sees them: params itself, a converted copy, or a value of a type of this
// package for a shape the 1.x types cannot hold.
func (v *View) Notification(method string, params any) any {
	if !v.legacy {
		return params
	}
	switch p := params.(type) {
	case *protocol.SessionAddedParams:
		out := *p
		out.Summary = v.Summary(p.Summary)
		return &out
	case *protocol.SessionSummaryChangedParams:
		out := *p
		out.Changes = downSummaryChanges(p.Changes)
		if v.shape >= Shape06 && out.Changes.WorkingDirectories != nil {
			out.Changes.WorkingDirectory, out.Changes.WorkingDirectories = first(out.Changes.WorkingDirectories), nil
		}
		return &out
	case *protocol.AuthRequiredParams:
		return &legacyAuthRequired{p: p}
	}
	return params
}

// Error returns an error reply as the version sees it.
func (v *View) Error(e *protocol.Error) *protocol.Error {
	if !v.legacy || e == nil {
		return e
	}
	if e.Code == protocol.CodeConflict {
		// Versions before 0.9.0 name no code for a conflicting write; the
		// write's parameters no longer match the resource.
		out := *e
		out.Code = protocol.CodeInvalidParams
		return &out
	}
	return e
}
