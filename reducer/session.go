package reducer

import (
	"maps"
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// Session returns the session state after applying a, one of the
// session/* actions. Any other action, including *protocol.Unknown, returns
// s itself, as does an action that names a chat, client, directory, input
// request or customization the session does not have.
//
// The session reducer never derives the session's status from its chats:
// that roll-up is the host's job (see SummaryStatus). The one status rule it
// applies itself is the InputNeeded bit that follows session.inputNeeded.
func (r Reducer) Session(s *protocol.SessionState, a protocol.StateAction) *protocol.SessionState {
	if s == nil {
		return s
	}
	switch a := a.(type) {
	// Lifecycle.
	case *protocol.SessionReadyAction:
		return sessionReady(s)
	case *protocol.SessionCreationFailedAction:
		return sessionCreationFailed(s, a)

	// The chat catalog.
	case *protocol.SessionChatAddedAction:
		return sessionChatAdded(s, a)
	case *protocol.SessionChatRemovedAction:
		return sessionChatRemoved(s, a)
	case *protocol.SessionChatUpdatedAction:
		return sessionChatUpdated(s, a)
	case *protocol.SessionDefaultChatChangedAction:
		return sessionDefaultChatChanged(s, a)
	case *protocol.SessionChatsReorderedAction:
		return sessionChatsReordered(s, a)

	// Metadata.
	case *protocol.SessionTitleChangedAction:
		return sessionTitleChanged(s, a)
	case *protocol.SessionActivityChangedAction:
		return sessionActivityChanged(s, a)
	case *protocol.SessionIsReadChangedAction:
		return sessionWithFlag(s, protocol.SessionStatusIsRead, a.IsRead)
	case *protocol.SessionIsArchivedChangedAction:
		return sessionWithFlag(s, protocol.SessionStatusIsArchived, a.IsArchived)
	case *protocol.SessionMetaChangedAction:
		return sessionMetaChanged(s, a)
	case *protocol.SessionChangesetsChangedAction:
		return sessionChangesetsChanged(s, a)
	case *protocol.SessionConfigChangedAction:
		return sessionConfigChanged(s, a)

	// Tools and active clients.
	case *protocol.SessionServerToolsChangedAction:
		return sessionServerToolsChanged(s, a)
	case *protocol.SessionActiveClientSetAction:
		return sessionActiveClientSet(s, a)
	case *protocol.SessionActiveClientRemovedAction:
		return sessionActiveClientRemoved(s, a)

	// Working directories.
	case *protocol.SessionWorkingDirectorySetAction:
		return sessionWorkingDirectorySet(s, a)
	case *protocol.SessionWorkingDirectoryRemovedAction:
		return sessionWorkingDirectoryRemoved(s, a)
	case *protocol.SessionWorkingDirectoryReplacedAction:
		return sessionWorkingDirectoryReplaced(s, a)

	// Aggregated input requests (session_input.go).
	case *protocol.SessionInputNeededSetAction:
		return sessionInputNeededSet(s, a)
	case *protocol.SessionInputNeededRemovedAction:
		return sessionInputNeededRemoved(s, a)

	// Customizations and MCP servers (session_customizations.go).
	case *protocol.SessionCustomizationsChangedAction:
		return sessionCustomizationsChanged(s, a)
	case *protocol.SessionCustomizationToggledAction:
		return sessionCustomizationToggled(s, a)
	case *protocol.SessionCustomizationUpdatedAction:
		return sessionCustomizationUpdated(s, a)
	case *protocol.SessionCustomizationRemovedAction:
		return sessionCustomizationRemoved(s, a)
	case *protocol.SessionMCPServerStateChangedAction:
		return sessionMcpServerStateChanged(s, a)
	case *protocol.SessionMCPServerStartRequestedAction:
		return sessionMcpServerStartRequested(s, a)
	case *protocol.SessionMCPServerStopRequestedAction:
		return sessionMcpServerStopRequested(s, a)
	case *protocol.SessionMCPServerBackgroundRequestedAction:
		return sessionMcpServerBackgroundRequested(s, a)
	}
	return s
}

// sessionReady moves the session to the ready phase. It leaves the status
// alone: a session's first turn may already be running when its backend
// finishes starting.
func sessionReady(s *protocol.SessionState) *protocol.SessionState {
	next := *s
	next.Lifecycle = protocol.SessionLifecycleReady
	return &next
}

// sessionCreationFailed moves the session to the failed phase (1.x
// renamed creationFailed to failed) and records why.
func sessionCreationFailed(s *protocol.SessionState, a *protocol.SessionCreationFailedAction) *protocol.SessionState {
	next := *s
	next.Lifecycle = protocol.SessionLifecycleFailed
	err := a.Error
	next.CreationError = &err
	return &next
}

// sessionChatAdded inserts a chat into the catalog, or replaces the entry
// with the same resource.
func sessionChatAdded(s *protocol.SessionState, a *protocol.SessionChatAddedAction) *protocol.SessionState {
	next := *s
	next.Chats = sessionUpsert(s.Chats, a.Summary, func(c protocol.ChatSummary) bool {
		return c.Resource == a.Summary.Resource
	})
	return &next
}

// sessionChatRemoved drops a chat from the catalog and clears defaultChat
// when it pointed at that chat.
func sessionChatRemoved(s *protocol.SessionState, a *protocol.SessionChatRemovedAction) *protocol.SessionState {
	i := sessionChatIndex(s.Chats, a.Chat)
	if i < 0 {
		return s
	}
	next := *s
	next.Chats = sessionDelete(s.Chats, i)
	if s.DefaultChat != nil && *s.DefaultChat == a.Chat {
		next.DefaultChat = nil
	}
	return &next
}

// sessionChatUpdated merges the fields present in the action's changes into
// a catalog entry. The entry's resource is its identity and never changes.
func sessionChatUpdated(s *protocol.SessionState, a *protocol.SessionChatUpdatedAction) *protocol.SessionState {
	i := sessionChatIndex(s.Chats, a.Chat)
	if i < 0 {
		return s
	}
	next := *s
	next.Chats = sessionReplace(s.Chats, i, sessionMergeChat(s.Chats[i], &a.Changes))
	return &next
}

// sessionMergeChat returns c with every field set in changes copied over,
// except the resource, and every optional field sent as null cleared.
// Absent members leave their field as it was.
func sessionMergeChat(c protocol.ChatSummary, changes *protocol.SessionChatUpdatedActionChanges) protocol.ChatSummary {
	for _, name := range changes.Cleared {
		switch name {
		case "activity":
			c.Activity = nil
		case "origin":
			c.Origin = nil
		case "interactivity":
			c.Interactivity = nil
		case "workingDirectories":
			c.WorkingDirectories = nil
		case "changes":
			c.Changes = nil
		case "movable":
			c.Movable = nil
		}
	}
	if changes.Title != nil {
		c.Title = *changes.Title
	}
	if changes.Status != nil {
		c.Status = *changes.Status
	}
	if changes.Activity != nil {
		c.Activity = changes.Activity
	}
	if changes.ModifiedAt != nil {
		c.ModifiedAt = *changes.ModifiedAt
	}
	if changes.Origin != nil {
		c.Origin = changes.Origin
	}
	if changes.Interactivity != nil {
		c.Interactivity = changes.Interactivity
	}
	if changes.WorkingDirectories != nil {
		c.WorkingDirectories = changes.WorkingDirectories
	}
	if changes.Changes != nil {
		c.Changes = changes.Changes
	}
	if changes.Movable != nil {
		c.Movable = changes.Movable
	}
	return c
}

// sessionChatIndex returns the index of the chat with the given resource in
// chats, or -1.
func sessionChatIndex(chats []protocol.ChatSummary, resource protocol.URI) int {
	return slices.IndexFunc(chats, func(c protocol.ChatSummary) bool { return c.Resource == resource })
}

// sessionDefaultChatChanged sets or, when the action carries none, clears
// the input-routing hint. Whether the chat exists is checked by the host
// when it validates the action, not here.
func sessionDefaultChatChanged(s *protocol.SessionState, a *protocol.SessionDefaultChatChangedAction) *protocol.SessionState {
	next := *s
	next.DefaultChat = a.DefaultChat
	return &next
}

// sessionTitleChanged renames the session.
func sessionTitleChanged(s *protocol.SessionState, a *protocol.SessionTitleChangedAction) *protocol.SessionState {
	next := *s
	next.Title = a.Title
	return &next
}

// sessionActivityChanged replaces the activity text; an action without one
// clears it.
func sessionActivityChanged(s *protocol.SessionState, a *protocol.SessionActivityChangedAction) *protocol.SessionState {
	next := *s
	next.Activity = a.Activity
	return &next
}

// sessionWithFlag sets or clears one of the orthogonal status flags
// (IsRead, IsArchived), keeping every other bit.
func sessionWithFlag(s *protocol.SessionState, flag protocol.SessionStatus, on bool) *protocol.SessionState {
	next := *s
	if on {
		next.Status |= flag
	} else {
		next.Status &^= flag
	}
	return &next
}

// sessionMetaChanged replaces _meta as a whole.
func sessionMetaChanged(s *protocol.SessionState, a *protocol.SessionMetaChangedAction) *protocol.SessionState {
	next := *s
	next.Meta = a.Meta
	return &next
}

// sessionChangesetsChanged replaces the changeset catalogue; an action
// without one removes it.
func sessionChangesetsChanged(s *protocol.SessionState, a *protocol.SessionChangesetsChangedAction) *protocol.SessionState {
	next := *s
	next.Changesets = a.Changesets
	return &next
}

// sessionConfigChanged merges new values into the session configuration,
// or replaces them all when the action says so. A session without a
// configuration is left alone: there is no schema to hold the values.
func sessionConfigChanged(s *protocol.SessionState, a *protocol.SessionConfigChangedAction) *protocol.SessionState {
	if s.Config == nil {
		return s
	}
	config := *s.Config
	config.Values = sessionMergeConfigValues(config.Values, a.Config, a.Replace != nil && *a.Replace)
	next := *s
	next.Config = &config
	return &next
}

// sessionMergeConfigValues returns the configuration values after a
// configChanged action, on the session or the root channel: values
// overlaid with changes, or changes alone when replace is set. It modifies
// neither map and never returns nil.
func sessionMergeConfigValues[M ~map[K]V, K comparable, V any](values, changes M, replace bool) M {
	out := make(M, len(values)+len(changes))
	if !replace {
		maps.Copy(out, values)
	}
	maps.Copy(out, changes)
	return out
}

// sessionServerToolsChanged replaces the host's tool list.
func sessionServerToolsChanged(s *protocol.SessionState, a *protocol.SessionServerToolsChangedAction) *protocol.SessionState {
	next := *s
	next.ServerTools = a.Tools
	return &next
}

// sessionActiveClientSet adds a client to the active set, or replaces the
// entry with the same clientId (its tools and customizations included).
func sessionActiveClientSet(s *protocol.SessionState, a *protocol.SessionActiveClientSetAction) *protocol.SessionState {
	next := *s
	next.ActiveClients = sessionUpsert(s.ActiveClients, a.ActiveClient, func(c protocol.SessionActiveClient) bool {
		return c.ClientID == a.ActiveClient.ClientID
	})
	return &next
}

// sessionActiveClientRemoved drops a client from the active set.
func sessionActiveClientRemoved(s *protocol.SessionState, a *protocol.SessionActiveClientRemovedAction) *protocol.SessionState {
	i := slices.IndexFunc(s.ActiveClients, func(c protocol.SessionActiveClient) bool { return c.ClientID == a.ClientID })
	if i < 0 {
		return s
	}
	next := *s
	next.ActiveClients = sessionDelete(s.ActiveClients, i)
	return &next
}

// sessionWorkingDirectorySet appends a directory to the session's set,
// creating the set if needed.
func sessionWorkingDirectorySet(s *protocol.SessionState, a *protocol.SessionWorkingDirectorySetAction) *protocol.SessionState {
	if slices.Contains(s.WorkingDirectories, a.Directory) {
		return s
	}
	next := *s
	next.WorkingDirectories = sessionAppend(s.WorkingDirectories, a.Directory)
	return &next
}

// sessionWorkingDirectoryRemoved removes a directory from the session's
// set. It removes whatever it is given, the first entry included: keeping
// an immutable primary directory is up to the host's validation.
func sessionWorkingDirectoryRemoved(s *protocol.SessionState, a *protocol.SessionWorkingDirectoryRemovedAction) *protocol.SessionState {
	i := slices.Index(s.WorkingDirectories, a.Directory)
	if i < 0 {
		return s
	}
	next := *s
	next.WorkingDirectories = sessionDelete(s.WorkingDirectories, i)
	return &next
}

// The helpers below build new slices and never write to the backing array
// of the slice they are given, which may belong to an earlier state.

// sessionAppend returns a new slice holding list followed by v.
func sessionAppend[T any](list []T, v T) []T {
	out := make([]T, len(list), len(list)+1)
	copy(out, list)
	return append(out, v)
}

// sessionReplace returns a copy of list with element i set to v.
func sessionReplace[T any](list []T, i int, v T) []T {
	out := slices.Clone(list)
	out[i] = v
	return out
}

// sessionDelete returns a copy of list without element i. The result is
// empty, not nil, when i was the only element.
func sessionDelete[T any](list []T, i int) []T {
	out := make([]T, 0, len(list)-1)
	out = append(out, list[:i]...)
	return append(out, list[i+1:]...)
}

// sessionUpsert returns a copy of list in which v replaces the first
// element matching same, or, when none does, is appended.
func sessionUpsert[T any](list []T, v T, same func(T) bool) []T {
	if i := slices.IndexFunc(list, same); i >= 0 {
		return sessionReplace(list, i, v)
	}
	return sessionAppend(list, v)
}

// sessionChatsReordered replaces the catalog order with the action's, which
// must name every chat of the session exactly once
// (SessionChatsReorderedAction: "invalid or incomplete orders are
// ignored"). Each summary is kept as it is.
func sessionChatsReordered(s *protocol.SessionState, a *protocol.SessionChatsReorderedAction) *protocol.SessionState {
	if len(a.Chats) != len(s.Chats) {
		return s
	}
	byURI := make(map[string]int, len(s.Chats))
	for i, c := range s.Chats {
		byURI[c.Resource] = i
	}
	chats := make([]protocol.ChatSummary, 0, len(s.Chats))
	seen := make(map[string]bool, len(a.Chats))
	for _, uri := range a.Chats {
		i, ok := byURI[uri]
		if !ok || seen[uri] {
			return s
		}
		seen[uri] = true
		chats = append(chats, s.Chats[i])
	}
	next := *s
	next.Chats = chats
	return &next
}

// sessionWorkingDirectoryReplaced replaces one working directory in place
// and removes the duplicate that may make (SessionWorkingDirectoryReplacedAction):
// a no-op when the directory is not there; a replacement found after the
// target moves to the target's place, one found before it stays and the
// target goes.
func sessionWorkingDirectoryReplaced(s *protocol.SessionState, a *protocol.SessionWorkingDirectoryReplacedAction) *protocol.SessionState {
	i := slices.Index(s.WorkingDirectories, a.Directory)
	if i < 0 {
		return s
	}
	j := slices.Index(s.WorkingDirectories, a.Replacement)
	var dirs []protocol.URI
	switch {
	case j < 0 || j == i:
		dirs = slices.Clone(s.WorkingDirectories)
		dirs[i] = a.Replacement
	case j > i:
		dirs = slices.Concat(s.WorkingDirectories[:i], []protocol.URI{a.Replacement}, s.WorkingDirectories[i+1:j], s.WorkingDirectories[j+1:])
	default:
		dirs = slices.Concat(s.WorkingDirectories[:i], s.WorkingDirectories[i+1:])
	}
	next := *s
	next.WorkingDirectories = dirs
	return &next
}
