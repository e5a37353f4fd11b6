package host

import (
	"context"
	"errors"
	"runtime/debug"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// Handle serves one client request or notification. The JSON-RPC peer calls
// it in arrival order on one goroutine per connection.
func (c *conn) Handle(ctx context.Context, req *jsonrpc.Request) (result any, err error) {
	defer func() {
		// A bug must not take the host down with it: answer and log.
		if p := recover(); p != nil {
			c.h.log.Error("panic while handling a request", "method", clip(req.Method, maxLoggedValue), "panic", p, "stack", string(debug.Stack()))
			result, err = nil, rpcError(protocol.CodeInternalError, "%s: internal error", req.Method)
		}
	}()
	switch req.Method {
	case "ping":
		return nil, nil
	case "initialize":
		return nil, c.initialize(req)
	case "reconnect":
		return nil, c.reconnect(req)
	}
	c.h.mu.Lock()
	ready := c.initialized
	c.h.mu.Unlock()
	if !ready {
		if req.IsNotification() {
			c.h.log.Debug("notification before initialize ignored", "method", clip(req.Method, maxLoggedValue))
			return nil, nil
		}
		return nil, rpcError(protocol.CodeInvalidRequest, "%s: the connection is not initialized; send initialize first", req.Method)
	}
	switch req.Method {
	case "subscribe":
		return nil, c.subscribe(req)
	case "unsubscribe":
		return nil, c.unsubscribe(req)
	case "dispatchAction":
		return nil, c.dispatchAction(req)
	case "listSessions":
		return decodeAnd(ctx, req, c.h.listSessions)
	case "createSession":
		return decodeAnd(ctx, req, c.createSession)
	case "disposeSession":
		return decodeAnd(ctx, req, c.h.disposeSession)
	case "createChat":
		return decodeAnd(ctx, req, c.createChat)
	case "disposeChat":
		return decodeAnd(ctx, req, c.h.disposeChat)
	case "fetchTurns":
		return nil, c.fetchTurns(req)
	case "completions":
		return &protocol.CompletionsResult{Items: []protocol.CompletionItem{}}, nil
	case "authenticate":
		return &protocol.AuthenticateResult{}, nil
	}
	if res, ok, err := c.serveWorkspace(ctx, req.Method, req.Params); ok {
		return res, err
	}
	if m, ok := protocol.LookupMethod(req.Method); ok && m.FromClient {
		return nil, rpcError(protocol.CodeMethodNotFound, "%s is not supported by this host", req.Method)
	}
	return nil, rpcError(protocol.CodeMethodNotFound, "unknown method %q", req.Method)
}

// decodeAnd decodes the request's params as P and calls f.
func decodeAnd[P any, R any](ctx context.Context, req *jsonrpc.Request, f func(context.Context, *P) (R, error)) (any, error) {
	p := new(P)
	if err := decodeParams(req, p); err != nil {
		return nil, err
	}
	return f(ctx, p)
}

// decodeParams decodes params strictly into p, answering bad params with
// -32602.
func decodeParams(req *jsonrpc.Request, p any) error {
	if len(req.Params) == 0 {
		return rpcError(protocol.CodeInvalidParams, "%s: params are required", req.Method)
	}
	if err := protocol.Unmarshal(req.Params, p); err != nil {
		return rpcError(protocol.CodeInvalidParams, "%s: %v", req.Method, err)
	}
	return nil
}

// initialize negotiates the protocol version, subscribes to the initial
// channels and answers with their snapshots. The answer is queued while the
// host is locked, so no action on those channels can overtake it.
func (c *conn) initialize(req *jsonrpc.Request) error {
	var p protocol.InitializeParams
	if err := decodeParams(req, &p); err != nil {
		return err
	}
	version, err := protocol.Negotiate(p.ProtocolVersions)
	if err != nil {
		var uv *protocol.UnsupportedVersionError
		if errors.As(err, &uv) {
			// versioning.md: answer -32005, then close the connection.
			req.Reply(nil, uv.RPCError())
			go c.closeWith(errUnsupportedVersion)
			return nil
		}
		return rpcError(protocol.CodeInvalidParams, "initialize: %v", err)
	}
	if p.ClientID == "" {
		return rpcError(protocol.CodeInvalidParams, "initialize: clientId is required")
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if c.initialized {
		return rpcError(protocol.CodeInvalidRequest, "initialize: the connection is already initialized")
	}
	c.setIdentityLocked(p.ClientID, version)
	res := &protocol.InitializeResult{
		ProtocolVersion: version,
		ServerSeq:       h.seq,
		ServerInfo:      &h.opts.ServerInfo,
		Snapshots:       []protocol.Snapshot{},
	}
	if h.opts.DefaultDirectory != "" {
		res.DefaultDirectory = protocol.Ptr(h.opts.DefaultDirectory)
	}
	for _, uri := range p.InitialSubscriptions {
		snap, ok, err := c.subscribeLocked(uri, nil)
		if err != nil {
			h.log.Error("an initial subscription failed", "client", clip(c.clientID, maxLoggedValue), "channel", clip(uri, maxLoggedValue), "err", err)
		}
		if ok {
			res.Snapshots = append(res.Snapshots, snap)
		}
	}
	req.Reply(res, nil)
	return nil
}

func (c *conn) setIdentityLocked(clientID, version string) {
	c.initialized = true
	c.initTimer.Stop()
	c.clientID = clientID
	c.version = version
	clear(c.known)
	c.h.versions[clientID] = version
}

// subscribeLocked adds a subscription and returns the channel's snapshot,
// reading the channel from the store when it is not in memory. Unknown
// channels give false; a failed read gives an error and no subscription.
func (c *conn) subscribeLocked(uri string, view *protocol.SubscribeView) (protocol.Snapshot, bool, error) {
	h := c.h
	ch, err := h.channelLocked(uri)
	if err != nil || ch == nil {
		return protocol.Snapshot{}, false, err
	}
	turns := -1
	if view != nil && view.Turns != nil {
		turns = int(max(*view.Turns, 0))
	}
	state, err := h.snapshotStateLocked(ch, turns)
	if err != nil {
		return protocol.Snapshot{}, false, err
	}
	sub := &subscription{ch: ch, turnsFrom: windowStart(ch, turns)}
	ch.subs[c] = sub
	c.subs[uri] = sub
	return protocol.Snapshot{Resource: uri, State: state, FromSeq: h.seq}, true, nil
}

func (c *conn) subscribe(req *jsonrpc.Request) error {
	var p protocol.SubscribeParams
	if err := decodeParams(req, &p); err != nil {
		return err
	}
	if _, err := protocol.ParseChannel(p.Channel); err != nil {
		return rpcError(protocol.CodeInvalidParams, "subscribe: %v", err)
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	snap, ok, err := c.subscribeLocked(p.Channel, p.View)
	if err != nil {
		return rpcError(protocol.CodeInternalError, "subscribe: %v", err)
	}
	if !ok {
		return rpcError(protocol.CodeNotFound, "subscribe: no channel %s", p.Channel)
	}
	req.Reply(&protocol.SubscribeResult{Snapshot: &snap}, nil)
	return nil
}

func (c *conn) unsubscribe(req *jsonrpc.Request) error {
	var p protocol.UnsubscribeParams
	if err := decodeParams(req, &p); err != nil {
		return err
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub, ok := c.subs[p.Channel]; ok {
		delete(sub.ch.subs, c)
		delete(c.subs, p.Channel)
		h.leaveSessionLocked(c.clientID, sub.ch)
		h.unsubscribedLocked(c, sub.ch)
	}
	return nil
}

// reconnect resumes a client's subscriptions after a lost connection: a
// replay of what it missed when the replay log still holds it, fresh
// snapshots otherwise. Channels that no longer exist are listed as missing.
func (c *conn) reconnect(req *jsonrpc.Request) error {
	var p protocol.ReconnectParams
	if err := decodeParams(req, &p); err != nil {
		return err
	}
	if p.ClientID == "" {
		return rpcError(protocol.CodeInvalidParams, "reconnect: clientId is required")
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	version := c.version
	if !c.initialized {
		// A reconnect opens the new connection with the version the client
		// negotiated before; a client the host does not remember gets the
		// newest version.
		version = h.versions[p.ClientID]
		if version == "" {
			version = protocol.ProtocolVersion
		}
	}
	// Read what is not in memory first, so a failure changes nothing.
	for _, uri := range p.Subscriptions {
		if _, err := h.channelLocked(uri); err != nil {
			return rpcError(protocol.CodeInternalError, "reconnect: %v", err)
		}
	}
	c.setIdentityLocked(p.ClientID, version)
	wanted := map[string]bool{}
	missing := []string{}
	for _, uri := range p.Subscriptions {
		ch, ok := h.channels[uri]
		if !ok {
			missing = append(missing, uri)
			continue
		}
		wanted[uri] = true
		sub := &subscription{ch: ch, turnsFrom: -1}
		ch.subs[c] = sub
		c.subs[uri] = sub
	}
	if p.LastSeenServerSeq <= h.seq {
		if entries, ok := h.replay.since(p.LastSeenServerSeq, wanted); ok {
			actions := make([]rawEnvelope, 0, len(entries))
			for _, e := range entries {
				if c.knowsLocked(e.actionType) {
					actions = append(actions, rawEnvelope(e.envelope))
				}
			}
			req.Reply(&replayResult{Actions: actions, Missing: missing}, nil)
			return nil
		}
	}
	res := &protocol.ReconnectSnapshotResult{Snapshots: []protocol.Snapshot{}}
	for _, uri := range p.Subscriptions {
		if ch, ok := h.channels[uri]; ok {
			state, err := h.snapshotStateLocked(ch, -1)
			if err != nil {
				return rpcError(protocol.CodeInternalError, "reconnect: %v", err)
			}
			c.subs[uri].turnsFrom = 0
			res.Snapshots = append(res.Snapshots, protocol.Snapshot{Resource: uri, State: state, FromSeq: h.seq})
		}
	}
	req.Reply(res, nil)
	return nil
}

// dispatchAction validates and applies a client action. Accepted actions
// are echoed to every subscriber with the client's origin; rejected ones
// are echoed to the sender alone with a rejection reason.
func (c *conn) dispatchAction(req *jsonrpc.Request) error {
	var p protocol.DispatchActionParams
	// Decoded strictly: an action with a required member absent is
	// rejected with a reason, never applied zero-filled.
	var missing *protocol.MissingError
	var err error = rpcError(protocol.CodeInvalidParams, "%s: params are required", req.Method)
	if len(req.Params) > 0 {
		if err = protocol.UnmarshalStrict(req.Params, &p); errors.As(err, &missing) {
			err = nil
		} else if err != nil {
			err = rpcError(protocol.CodeInvalidParams, "%s: %v", req.Method, err)
		}
	}
	if err != nil {
		c.h.log.Debug("dispatchAction with bad params dropped", "client", clip(c.clientID, maxLoggedValue), "err", clip(err.Error(), maxLoggedValue))
		return err
	}
	c.h.dispatchClient(c, &p, missing)
	return nil
}

func (c *conn) fetchTurns(req *jsonrpc.Request) error {
	var p protocol.FetchTurnsParams
	if err := decodeParams(req, &p); err != nil {
		return err
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	ch, err := h.channelLocked(p.Channel)
	if err != nil {
		return rpcError(protocol.CodeInternalError, "fetchTurns: %v", err)
	}
	if ch == nil || ch.kind != protocol.ChannelChat {
		return rpcError(protocol.CodeNotFound, "fetchTurns: no chat %s", p.Channel)
	}
	// Without a cursor the page is the one before the oldest turn this
	// client holds: its own window, not the host's.
	end := ch.turnBase
	sub := c.subs[ch.uri]
	if sub != nil && sub.turnsFrom >= 0 {
		end = sub.turnsFrom
	}
	if p.Cursor != nil {
		if end, err = parseTurnsCursor(p.Cursor); err != nil {
			return rpcError(protocol.CodeInvalidParams, "fetchTurns: %v", err)
		}
	}
	action, start, err := h.turnsPageLocked(ch, end)
	if err != nil {
		return rpcError(protocol.CodeInternalError, "fetchTurns: %v", err)
	}
	if sub != nil && (sub.turnsFrom < 0 || start < sub.turnsFrom) {
		sub.turnsFrom = start
	}
	// The schema asks for the page before the reply. It goes to this
	// client alone: other clients and the host's own state may already
	// hold these turns, and each client's window is its own.
	c.sendLocked(h.privateEnvelope(ch.uri, action, nil, ""))
	req.Reply(&protocol.FetchTurnsResult{}, nil)
	return nil
}
