package workspace

import (
	"context"
	"errors"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace/changeset"
)

// The workspace follows the host's sessions for their changesets.
var _ host.SessionObserver = (*Workspace)(nil)

// SessionOpened implements host.SessionObserver.
func (w *Workspace) SessionOpened(session string) { w.changesets.SessionOpened(session) }

// SessionClosed implements host.SessionObserver: the session's changesets
// and the terminals it claims go with it.
func (w *Workspace) SessionClosed(session string) {
	w.changesets.SessionClosed(session)
	w.disposeSessionTerminals(session, "")
}

// Committed implements host.SessionObserver: changesets follow the
// session's changes, and a removed chat's terminals go with it.
func (w *Workspace) Committed(session, channel string, a protocol.StateAction) {
	w.changesets.Committed(session, channel, a)
	if rm, ok := a.(*protocol.SessionChatRemovedAction); ok && rm.Chat != "" {
		w.disposeSessionTerminals(session, rm.Chat)
	}
}

func invokeChangesetOperation(ctx context.Context, w *Workspace, _ host.Client, p *protocol.InvokeChangesetOperationParams) (*protocol.InvokeChangesetOperationResult, error) {
	res, err := w.changesets.Invoke(ctx, p)
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) {
			out := *pe
			out.Message = "invokeChangesetOperation: " + pe.Message
			return nil, &out
		}
		return nil, &protocol.Error{Code: protocol.CodeInternalError, Message: "invokeChangesetOperation: " + err.Error()}
	}
	return res, nil
}

// readChangesetContent serves resourceRead for a changeset content
// reference (a file as git holds it at a commit), ranged like a file.
func readChangesetContent(ctx context.Context, w *Workspace, p *protocol.ResourceReadParams, r *readRange) (*jsonrpc.EncodedWithRoom, error) {
	data, err := w.changesets.Read(ctx, p.URI)
	if err != nil {
		var re *changeset.ReadError
		if errors.As(err, &re) {
			return nil, &protocol.Error{Code: re.Code, Message: "resourceRead: " + re.Message}
		}
		return nil, &protocol.Error{Code: protocol.CodeInternalError, Message: "resourceRead: " + err.Error()}
	}
	var meta *rangeInfo
	size := int64(len(data))
	if r != nil {
		if r.Offset < 0 || r.Length < 0 {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: "resourceRead: a range's offset and length must not be negative"}
		}
		off := min(r.Offset, size)
		end := size
		if r.Length > 0 {
			end = min(off+r.Length, size)
		}
		data = data[off:end]
		meta = &rangeInfo{Offset: off, Length: int64(len(data)), Size: size, EOF: end == size}
	}
	want := protocol.ContentEncodingUtf8
	if p.Encoding != nil {
		want = *p.Encoding
	}
	return encodeReadResult(data, want == protocol.ContentEncodingUtf8 && isText(data), "", meta)
}
