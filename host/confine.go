package host

import (
	"context"
	"slices"

	"github.com/ahp-go/ahp/protocol"
)

// A DirectoryConfiner is a Workspace that confines working directories:
// when it reports roots, the host creates sessions and chats, moves chats
// and accepts working directory changes only with directories inside
// them (package workspace's, with --root). Its method is called without
// the host's lock: it may read the file system (to resolve symbolic
// links).
type DirectoryConfiner interface {
	// ConfineDirectory returns nil when dir (a file: URI) may be a
	// working directory, else an error saying why, naming the roots.
	ConfineDirectory(dir string) error
	// Confining reports whether directories are confined at all.
	Confining() bool
}

// confiner is the workspace's DirectoryConfiner when it confines, else
// nil.
func (h *Host) confiner() DirectoryConfiner {
	if cf, ok := h.ws.(DirectoryConfiner); ok && cf.Confining() {
		return cf
	}
	return nil
}

// confineDirs answers -32602 for the first of dirs outside the roots
// working directories are confined to. Without the lock.
func (h *Host) confineDirs(method string, dirs []string) error {
	cf := h.confiner()
	if cf == nil {
		return nil
	}
	for _, d := range dirs {
		if err := cf.ConfineDirectory(d); err != nil {
			return rpcError(protocol.CodeInvalidParams, "%s: %v", method, err)
		}
	}
	return nil
}

// actionDirs returns the working directories a client action adds to a
// session or chat.
func actionDirs(a protocol.StateAction) []string {
	switch a := a.(type) {
	case *protocol.SessionWorkingDirectorySetAction:
		return []string{a.Directory}
	case *protocol.SessionWorkingDirectoryReplacedAction:
		return []string{a.Replacement}
	case *protocol.ChatWorkingDirectorySetAction:
		return []string{a.Directory}
	}
	return nil
}

// confineAction rejects, to the client alone, an action that would give
// a session or chat a working directory outside the roots. It reports
// whether it did.
func (h *Host) confineAction(c *conn, p *protocol.DispatchActionParams) bool {
	if p.Action == nil || h.confiner() == nil {
		return false
	}
	err := h.confineDirs(p.Action.Type(), actionDirs(p.Action))
	if err == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.gone {
		origin := &protocol.ActionOrigin{ClientID: c.clientID, ClientSeq: p.ClientSeq}
		c.sendLocked(h.privateEnvelope(c.view, p.Channel, p.Action, origin, err.(*protocol.Error).Message))
	}
	return true
}

// moveDirs returns the working directories a chat move gives the chat,
// and the new session when the chat moves to one, for confineDirs. What
// it cannot read is left to the move to report.
func (h *Host) moveDirs(ctx context.Context, p *protocol.MoveChatParams) []string {
	var dirs []string
	h.locked(ctx, func(rd *storeReads) (change, error) {
		dirs = nil
		ch, err := h.channelLocked(rd, p.Channel)
		if err != nil || ch == nil || ch.kind != protocol.ChannelChat || ch.session == nil {
			return nil, err
		}
		dirs = slices.Clone(ch.state.(*protocol.ChatState).WorkingDirectories)
		if _, ok := p.Destination.(*protocol.ChatMoveToNewSessionDestination); ok {
			sch, err := h.channelLocked(rd, ch.session.uri)
			if err != nil || sch == nil {
				return nil, err
			}
			dirs = append(dirs, sch.state.(*protocol.SessionState).WorkingDirectories...)
		}
		return nil, nil
	})
	return dirs
}
