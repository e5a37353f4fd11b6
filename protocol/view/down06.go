package view

import "github.com/ahp-go/ahp/protocol"

// Conversions for 0.5.x and 0.6.x, on top of those to the 0.8.0 shapes:
// one workingDirectory for the list (multiroot sessions came in 0.7.0),
// and at 0.5.x the open input requests beside the turns.

// first returns the first of a list of directories, the one older versions
// name: with immutablePrimary it is the session's primary root.
func first(dirs []protocol.URI) *string {
	if len(dirs) == 0 {
		return nil
	}
	return protocol.Ptr(dirs[0])
}

func down06Action(a protocol.StateAction, shape Shape) protocol.StateAction {
	switch a := a.(type) {
	case *protocol.ChatTurnsLoadedAction:
		if shape < Shape05 {
			return a
		}
		turns := down05Turns(a.Turns, shape)
		if sameSlice(turns, a.Turns) {
			return a
		}
		out := *a
		out.Turns = turns
		return &out
	case *protocol.SessionChatAddedAction:
		if a.Summary.WorkingDirectories == nil {
			return a
		}
		out := *a
		out.Summary.WorkingDirectory, out.Summary.WorkingDirectories = first(a.Summary.WorkingDirectories), nil
		return &out
	case *protocol.SessionChangesetsChangedAction:
		if shape < Shape05 {
			return a
		}
		if list := down05Catalogue(a.Changesets); !sameSlice(list, a.Changesets) {
			return &protocol.SessionChangesetsChangedAction{Changesets: list}
		}
		return a
	case *protocol.ChangesetFileSetAction:
		if shape < Shape05 || a.File.Reviewed == nil {
			return a
		}
		out := *a
		out.File.Reviewed = nil
		return &out
	case *protocol.ChangesetContentChangedAction:
		if shape < Shape05 {
			return a
		}
		if files := down05Files(a.Files); !sameSlice(files, a.Files) {
			out := *a
			out.Files = files
			return &out
		}
		return a
	case *protocol.SessionChatUpdatedAction:
		if a.Changes.WorkingDirectories == nil {
			return a
		}
		out := *a
		out.Changes.WorkingDirectory, out.Changes.WorkingDirectories = first(a.Changes.WorkingDirectories), nil
		return &out
	}
	return a
}

func down06State(s protocol.SnapshotState, shape Shape) protocol.SnapshotState {
	switch s := s.(type) {
	case *protocol.SessionState:
		out := *s
		out.WorkingDirectory, out.WorkingDirectories = first(s.WorkingDirectories), nil
		if len(s.Chats) > 0 {
			out.Chats = make([]protocol.ChatSummary, len(s.Chats))
			for i, c := range s.Chats {
				c.WorkingDirectory, c.WorkingDirectories = first(c.WorkingDirectories), nil
				out.Chats[i] = c
			}
		}
		if shape >= Shape05 {
			out.Changesets = down05Catalogue(s.Changesets)
		}
		return &out
	case *protocol.ChangesetState:
		if shape < Shape05 {
			return s
		}
		if files := down05Files(s.Files); !sameSlice(files, s.Files) {
			out := *s
			out.Files = files
			return &out
		}
		return s
	case *protocol.ChatState:
		out := s.Clone()
		out.WorkingDirectory, out.WorkingDirectories = first(s.WorkingDirectories), nil
		if shape < Shape05 {
			return out
		}
		out.Turns = down05Turns(s.Turns, shape)
		if s.ActiveTurn != nil {
			// 0.5.x: the open requests sit beside the turns, and the
			// turn's parts record only resolved ones (0.5.2) or none
			// (0.5.1).
			var open []protocol.ChatInputRequest
			for _, p := range s.ActiveTurn.ResponseParts {
				if r, ok := p.(*protocol.InputRequestResponsePart); ok && r.Response == nil {
					open = append(open, r.Request)
				}
			}
			if parts := down05Parts(s.ActiveTurn.ResponseParts, shape); !sameSlice(parts, s.ActiveTurn.ResponseParts) {
				out.ActiveTurn = &protocol.ActiveTurn{ActiveTurnFields: s.ActiveTurn.ActiveTurnFields, ResponseParts: parts}
			}
			out.InputRequests = open
		}
		return out
	}
	return s
}

// down05Turns shows completed turns as 0.5.x records them: without the
// input requests the turn ended without answering, and at 0.5.1 without
// any input request.
func down05Turns(turns []protocol.Turn, shape Shape) []protocol.Turn {
	return convertEach(turns, func(t protocol.Turn) (protocol.Turn, bool) {
		parts := down05Parts(t.ResponseParts, shape)
		if sameSlice(parts, t.ResponseParts) {
			return t, false
		}
		t.ResponseParts = parts
		return t, true
	})
}

// down05Parts leaves out the inputRequest parts 0.5.x does not record in
// a turn: open ones (they sit in ChatState.inputRequests while the turn
// runs, and are gone once it ends) and, at 0.5.1, every one. It returns
// parts itself when none is left out.
func down05Parts(parts []protocol.ResponsePart, shape Shape) []protocol.ResponsePart {
	drop := func(p protocol.ResponsePart) bool {
		r, ok := p.(*protocol.InputRequestResponsePart)
		return ok && (r.Response == nil || shape == Shape051)
	}
	first := -1
	for i, p := range parts {
		if drop(p) {
			first = i
			break
		}
	}
	if first < 0 {
		return parts
	}
	out := append(make([]protocol.ResponsePart, 0, len(parts)-1), parts[:first]...)
	for _, p := range parts[first+1:] {
		if !drop(p) {
			out = append(out, p)
		}
	}
	return out
}

// up06State brings a 0.5.x or 0.6.x state up to the 0.8.0 shapes.
func up06State(s protocol.SnapshotState) protocol.SnapshotState {
	switch s := s.(type) {
	case *protocol.SessionState:
		if s.WorkingDirectory == nil && !hasChatDirectory(s.Chats) {
			return s
		}
		out := *s
		if s.WorkingDirectory != nil && s.WorkingDirectories == nil {
			out.WorkingDirectories = []protocol.URI{*s.WorkingDirectory}
		}
		out.WorkingDirectory = nil
		out.Chats = make([]protocol.ChatSummary, len(s.Chats))
		for i, c := range s.Chats {
			if c.WorkingDirectory != nil && c.WorkingDirectories == nil {
				c.WorkingDirectories = []protocol.URI{*c.WorkingDirectory}
			}
			c.WorkingDirectory = nil
			out.Chats[i] = c
		}
		return &out
	case *protocol.ChatState:
		if s.WorkingDirectory == nil && s.InputRequests == nil {
			return s
		}
		out := s.Clone()
		if s.WorkingDirectory != nil && s.WorkingDirectories == nil {
			out.WorkingDirectories = []protocol.URI{*s.WorkingDirectory}
		}
		out.WorkingDirectory = nil
		if s.InputRequests != nil && s.ActiveTurn != nil {
			parts := append([]protocol.ResponsePart(nil), s.ActiveTurn.ResponseParts...)
			for _, r := range s.InputRequests {
				parts = append(parts, &protocol.InputRequestResponsePart{Request: r})
			}
			out.ActiveTurn = &protocol.ActiveTurn{ActiveTurnFields: s.ActiveTurn.ActiveTurnFields, ResponseParts: parts}
		}
		out.InputRequests = nil
		return out
	}
	return s
}

func hasChatDirectory(chats []protocol.ChatSummary) bool {
	for _, c := range chats {
		if c.WorkingDirectory != nil {
			return true
		}
	}
	return false
}

// UpCreateSession returns createSession params the version sent in their
// 1.x shape: an older version's one workingDirectory becomes the list.
func (v *View) UpCreateSession(p *protocol.CreateSessionParams) *protocol.CreateSessionParams {
	if p.WorkingDirectory == nil {
		return p
	}
	out := *p
	if out.WorkingDirectories == nil {
		out.WorkingDirectories = []protocol.URI{*p.WorkingDirectory}
	}
	out.WorkingDirectory = nil
	return &out
}

// UpCreateChat returns createChat params the version sent in their 1.x
// shape.
func (v *View) UpCreateChat(p *protocol.CreateChatParams) *protocol.CreateChatParams {
	if p.WorkingDirectory == nil {
		return p
	}
	out := *p
	if out.WorkingDirectories == nil {
		out.WorkingDirectories = []protocol.URI{*p.WorkingDirectory}
	}
	out.WorkingDirectory = nil
	return &out
}

// The review workflow (changeset/filesReviewChanged, and with it
// ChangesetFile.reviewed and the review capability) came in 0.6.0: 0.5.x
// sees changesets without it.

// down05Catalogue drops the review capability from catalogue entries.
func down05Catalogue(list []protocol.Changeset) []protocol.Changeset {
	return convertEach(list, func(c protocol.Changeset) (protocol.Changeset, bool) {
		if c.Capabilities == nil || c.Capabilities.Review == nil {
			return c, false
		}
		caps := *c.Capabilities
		caps.Review = nil
		c.Capabilities = &caps
		return c, true
	})
}

// down05Files drops the reviewed flags.
func down05Files(files []protocol.ChangesetFile) []protocol.ChangesetFile {
	return convertEach(files, func(f protocol.ChangesetFile) (protocol.ChangesetFile, bool) {
		changed := f.Reviewed != nil
		f.Reviewed = nil
		return f, changed
	})
}
