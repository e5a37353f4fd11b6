package reducer

import (
	"time"

	"github.com/ahp-go/ahp/protocol"
)

// A session's status, activity and modifiedAt roll up the state of its
// chats. The session reducer does not apply these rules (a chat's state
// lives on its own channel and reaches the session catalog only through
// session/chatUpdated); the host, which produces both, applies them with
// the functions below when it updates a session and its catalog entry:
//
//	status := reducer.SummaryStatus(session)
//	activity := reducer.SummaryActivity(session)
//	modifiedAt, ok := reducer.SummaryModifiedAt(session.Chats)
//
// With a single chat the chat's values pass through unchanged.

// SummaryStatus returns the status a session should report given its chats.
//
// The activity bits (Idle, InProgress, InputNeeded, Error) come from the
// default chat when it is in the catalog, otherwise from the most recently
// modified chat. InputNeeded replaces them when any chat needs input, or
// when an inputNeeded entry waits on the user; failing that, Error replaces
// them when any chat is in error. The spec promotes both without ordering
// them; InputNeeded goes first here because it is the one the user can act
// on. The flags above the activity bits (IsRead, IsArchived and any this
// package does not know) are the session's own and are kept from s.Status.
//
// A session without chats keeps its status. A session whose creation
// failed (its agent could not start) reports Error whatever its chats
// say, so that every list shows it failed without opening it.
func SummaryStatus(s *protocol.SessionState) protocol.SessionStatus {
	if sessionFailed(s) {
		return s.Status&^sessionActivityBits | protocol.SessionStatusError
	}
	bits, _ := sessionRollUp(s)
	return s.Status&^sessionActivityBits | bits
}

// sessionFailed reports a session whose creation failed.
func sessionFailed(s *protocol.SessionState) bool {
	return s.Lifecycle == protocol.SessionLifecycleFailed || s.Lifecycle == protocol.SessionLifecycleCreationFailed
}

// SummaryActivity returns the activity text a session should report: that
// of the chat whose activity bits SummaryStatus uses. This is the default
// (or most recently modified) chat unless another chat won the InputNeeded
// or Error promotion. A session without chats keeps its activity. A
// session whose creation failed reports why.
func SummaryActivity(s *protocol.SessionState) *string {
	if sessionFailed(s) && s.CreationError != nil && s.CreationError.Message != "" {
		msg := s.CreationError.Message
		return &msg
	}
	_, i := sessionRollUp(s)
	if i < 0 {
		return s.Activity
	}
	return s.Chats[i].Activity
}

// SummaryModifiedAt returns the latest modifiedAt among chats, as written
// in that chat's entry; ok is false when there are no chats. A timestamp
// that does not parse counts as older than any that does.
func SummaryModifiedAt(chats []protocol.ChatSummary) (modifiedAt string, ok bool) {
	i := sessionLatestChat(chats, func(int) bool { return true })
	if i < 0 {
		return "", false
	}
	return chats[i].ModifiedAt, true
}

// sessionRollUp returns the activity bits a session should report and the
// index in s.Chats of the chat they come from. With no chats it returns
// the session's own activity bits and -1.
func sessionRollUp(s *protocol.SessionState) (bits protocol.SessionStatus, chat int) {
	base := sessionBaseChat(s)
	if base < 0 {
		return s.Status & sessionActivityBits, -1
	}
	waiting := make(map[protocol.URI]bool)
	orphanWait := false // an entry waits on the user in a chat missing from the catalog
	for _, r := range s.InputNeeded {
		if !sessionAwaitsUser(r) {
			continue
		}
		c := sessionInputChat(r)
		waiting[c] = true
		if sessionChatIndex(s.Chats, c) < 0 {
			orphanWait = true
		}
	}
	needsInput := func(i int) bool {
		return s.Chats[i].Status&sessionInputBit != 0 || waiting[s.Chats[i].Resource]
	}
	failed := func(i int) bool {
		return s.Chats[i].Status&protocol.SessionStatusError != 0
	}
	if needsInput(base) {
		return protocol.SessionStatusInputNeeded, base
	}
	if i := sessionLatestChat(s.Chats, needsInput); i >= 0 {
		return protocol.SessionStatusInputNeeded, i
	}
	if orphanWait {
		return protocol.SessionStatusInputNeeded, base
	}
	if failed(base) {
		return protocol.SessionStatusError, base
	}
	if i := sessionLatestChat(s.Chats, failed); i >= 0 {
		return protocol.SessionStatusError, i
	}
	return s.Chats[base].Status & sessionActivityBits, base
}

// sessionBaseChat returns the index of the chat whose activity the session
// mirrors when no promotion applies: the default chat if the catalog has
// it, else the most recently modified chat, else -1.
func sessionBaseChat(s *protocol.SessionState) int {
	if s.DefaultChat != nil {
		if i := sessionChatIndex(s.Chats, *s.DefaultChat); i >= 0 {
			return i
		}
	}
	return sessionLatestChat(s.Chats, func(int) bool { return true })
}

// sessionLatestChat returns the index of the most recently modified chat
// among those for which keep is true, or -1. A modifiedAt that does not
// parse counts as older than any that does; of chats modified at the same
// time the first in the catalog wins.
func sessionLatestChat(chats []protocol.ChatSummary, keep func(i int) bool) int {
	best := -1
	var bestTime time.Time
	bestParsed := false
	for i, c := range chats {
		if !keep(i) {
			continue
		}
		t, err := protocol.ParseTime(c.ModifiedAt)
		parsed := err == nil
		if best < 0 || parsed && (!bestParsed || t.After(bestTime)) {
			best, bestTime, bestParsed = i, t, parsed
		}
	}
	return best
}

// SummaryChanges returns the roll-up of the chats' changes summaries a
// session should report (SessionSummary.changes), or nil when no chat has
// one. Of the two roll-ups the spec allows, summing the chats' stats or
// reporting the most expensive chat's, this takes the most expensive chat
// (the most lines added and deleted, then the most files): chats of one
// session usually share their working directories, and a sum would count
// the same changes once per chat.
func SummaryChanges(chats []protocol.ChatSummary) *protocol.ChangesSummary {
	var best *protocol.ChangesSummary
	cost := func(c *protocol.ChangesSummary) (int64, int64) {
		return deref64(c.Additions) + deref64(c.Deletions), deref64(c.Files)
	}
	for i := range chats {
		c := chats[i].Changes
		if c == nil {
			continue
		}
		if best == nil {
			best = c
			continue
		}
		lines, files := cost(c)
		bl, bf := cost(best)
		if lines > bl || lines == bl && files > bf {
			best = c
		}
	}
	return best
}

func deref64(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}
