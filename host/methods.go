package host

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"runtime/debug"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host/internal/check"
	"github.com/ahp-go/ahp/host/internal/replay"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// none is the result of a handler whose answer is null, and of
// notification handlers.
type none struct{}

// A route serves one client method. Which methods exist, whether each is a
// request or a notification, and its params type come from the protocol's
// method table; routes only add the handler. The host's own routes are in
// served; a workspace adds its own (Workspace.Methods), and Host.routes
// holds them all: one table, checked against protocol.Methods when the
// host starts.
type route struct {
	m        protocol.Method
	anyTime  bool // served before initialize
	optional bool // params may be absent
	// strict params are decoded with required members checked: what is
	// absent reaches the handler as its missing argument, so it can
	// reject rather than apply zero values.
	strict bool
	// locked handlers are steps (see step) run through Host.locked, and a
	// request is answered in the step's change, before the lock is
	// released, so that no change committed afterwards can overtake the
	// answer (a snapshot, a page). serveLocked is their read phase; the
	// change it returns answers req.
	locked bool
	// ws marks the routes a workspace registered.
	ws          bool
	serve       func(in inbound) (any, error)
	serveLocked func(in inbound, rd *storeReads, req *jsonrpc.Request) (change, error)
	params      reflect.Type
}

// inbound is one decoded client message on its way to a route's handler.
type inbound struct {
	c       *conn
	ctx     context.Context
	client  Client // the zero Client for routes served before initialize
	params  any
	missing *protocol.MissingError // strict routes only
}

// handler adapts a host handler of the usual shape.
func handler[P, R any](f func(*conn, context.Context, *P) (*R, error)) route {
	return route{
		params: reflect.TypeFor[*P](),
		serve: func(in inbound) (any, error) {
			r, err := f(in.c, in.ctx, in.params.(*P))
			if err != nil || r == nil {
				return nil, err
			}
			return r, nil
		},
	}
}

// strictHandler adapts a host handler that takes the required members its
// params lacked (nil when none) and decides itself what they mean.
func strictHandler[P, R any](f func(*conn, context.Context, *P, *protocol.MissingError) (*R, error)) route {
	return route{
		strict: true,
		params: reflect.TypeFor[*P](),
		serve: func(in inbound) (any, error) {
			r, err := f(in.c, in.ctx, in.params.(*P), in.missing)
			if err != nil || r == nil {
				return nil, err
			}
			return r, nil
		},
	}
}

// lockedHandler adapts a handler that is a step (see step): it reads
// through rd, changing nothing, and returns the change, which answers.
func lockedHandler[P, R any](f func(*conn, context.Context, *storeReads, *P) (func() (*R, error), error)) route {
	return route{
		params: reflect.TypeFor[*P](),
		locked: true,
		serve: func(inbound) (any, error) {
			return nil, rpcError(protocol.CodeInternalError, "internal error: a locked handler was served without the lock")
		},
		serveLocked: func(in inbound, rd *storeReads, req *jsonrpc.Request) (change, error) {
			c := in.c
			apply, err := f(c, in.ctx, rd, in.params.(*P))
			if err != nil {
				return nil, err
			}
			return func() error {
				if r, err := apply(); err != nil || r == nil {
					req.Reply(nil, err)
				} else {
					req.Reply(r, nil)
				}
				c.h.releaseHeldLocked()
				return nil
			}, nil
		},
	}
}

func (r route) anytime() route        { r.anyTime = true; return r }
func (r route) paramsOptional() route { r.optional = true; return r }

// served lists the client methods the host implements itself. To serve
// one more, add its entry: handler(f), strictHandler(f) when f must see
// the members the params lacked, or lockedHandler(f) when f is a step
// (see step) that answers under the host lock, with .anytime() (served
// before initialize) and .paramsOptional() as the method needs.
// f's params type must be the one protocol.Methods gives the method, or
// the package does not load. A component outside the package registers
// through Handle and HandleStrict instead (Workspace.Methods).
var served = map[string]route{
	"initialize":     lockedHandler((*conn).initializeLocked).anytime(),
	"reconnect":      lockedHandler((*conn).reconnectLocked).anytime(),
	"ping":           handler((*conn).ping).anytime().paramsOptional(),
	"subscribe":      lockedHandler((*conn).subscribeLocked),
	"unsubscribe":    handler((*conn).unsubscribe),
	"dispatchAction": strictHandler((*conn).dispatchAction),
	"listSessions":   handler((*conn).listSessions),
	"createSession":  handler((*conn).createSession),
	"disposeSession": handler((*conn).disposeSession),
	"createChat":     handler((*conn).createChat),
	"disposeChat":    handler((*conn).disposeChat),
	"moveChat":       handler((*conn).moveChat),
	"fetchTurns":     lockedHandler((*conn).fetchTurnsLocked),
	"completions":    handler((*conn).completions),
	"authenticate":   strictHandler((*conn).authenticate),

	"resolveSessionConfig":     handler((*conn).resolveSessionConfig),
	"sessionConfigCompletions": handler((*conn).sessionConfigCompletions),
}

// hostRoutes holds a route for every method the protocol's method table
// lets clients send, with the host's handler when it serves the method.
// The host's own handlers are checked when the package loads: a mismatch
// is a bug in this package.
var hostRoutes = func() map[string]route {
	out := map[string]route{}
	for _, m := range protocol.Methods() {
		if !m.FromClient {
			continue
		}
		r := served[m.Name]
		r.m = m
		out[m.Name] = r
	}
	for name, r := range served {
		if err := checkRoute(name, r); err != nil {
			panic("host: " + err.Error())
		}
	}
	return out
}()

// checkRoute reports whether r may serve the client method name: the
// method is one the protocol's method table lets clients send, and r's
// handler takes the params type the table gives it.
func checkRoute(name string, r route) error {
	m, ok := protocol.LookupMethod(name)
	if !ok || !m.FromClient {
		return fmt.Errorf("a handler for %s, which the method table does not list as a client method", name)
	}
	if r.serve == nil {
		return fmt.Errorf("the entry for %s has no handler", name)
	}
	if want := reflect.TypeOf(m.NewParams()); r.params != want {
		return fmt.Errorf("the handler of %s takes %v, the method table says %v", name, r.params, want)
	}
	return nil
}

// buildRoutes returns the host's routes with a workspace's methods added,
// refusing a method the protocol does not have, one whose handler takes
// another params type, and one that is already served.
func buildRoutes(extra []Method) (map[string]route, error) {
	if len(extra) == 0 {
		return hostRoutes, nil
	}
	out := maps.Clone(hostRoutes)
	for _, em := range extra {
		if err := checkRoute(em.name, em.r); err != nil {
			return nil, err
		}
		if out[em.name].serve != nil {
			return nil, fmt.Errorf("%s is served twice", em.name)
		}
		r := em.r
		r.m = out[em.name].m
		out[em.name] = r
	}
	return out, nil
}

// Handle serves one client request or notification. The JSON-RPC peer calls
// it in arrival order on one goroutine per connection. The method table
// decides, before any handler runs, whether the method exists, whether it
// came as the request or the notification it must be, and the type its
// params decode into.
func (c *conn) Handle(ctx context.Context, req *jsonrpc.Request) (result any, err error) {
	defer func() {
		// Errors travel with the codes of the connection's version.
		if e, ok := err.(*protocol.Error); ok {
			err = c.view.Error(e)
		}
	}()
	defer func() {
		// A bug must not take the host down with it: answer and log.
		if p := recover(); p != nil {
			c.h.log.Error("panic while handling a request", "method", clip(req.Method, maxLoggedValue), "panic", p, "stack", string(debug.Stack()))
			result, err = nil, rpcError(protocol.CodeInternalError, "%s: internal error", req.Method)
		}
	}()
	r, ok := c.h.routes[req.Method]
	switch {
	case !ok && req.IsNotification():
		// No answer is possible; VS Code's own notifications outside
		// the spec are expected and not worth a line.
		if !quietNotifications[req.Method] {
			c.h.log.Debug("notification for an unknown method ignored", "client", clip(c.id(), maxLoggedValue), "method", clip(req.Method, maxLoggedValue))
		}
		return nil, nil
	case !ok:
		return nil, rpcError(protocol.CodeMethodNotFound, "unknown method %q", req.Method)
	case req.IsNotification() && !r.m.Notification:
		// There is no id to answer with: refuse without running it.
		c.h.log.Debug("a request sent as a notification was refused", "client", clip(c.id(), maxLoggedValue), "method", clip(req.Method, maxLoggedValue))
		return nil, nil
	case !req.IsNotification() && r.m.Notification:
		return nil, rpcError(protocol.CodeInvalidRequest, "%s is a notification: send it without an id", req.Method)
	}
	in := inbound{c: c, ctx: ctx}
	if !r.anyTime {
		c.h.mu.Lock()
		ready, version := c.initialized, c.version
		if r.ws {
			in.client = clientLocked(c)
		}
		c.h.mu.Unlock()
		if !ready {
			if req.IsNotification() {
				c.h.log.Debug("notification before initialize ignored", "method", clip(req.Method, maxLoggedValue))
				return nil, nil
			}
			return nil, rpcError(protocol.CodeInvalidRequest, "%s: the connection is not initialized; send initialize first", req.Method)
		}
		// A method newer than the negotiated version does not exist for
		// this connection.
		if !protocol.MethodKnownToVersion(req.Method, version) {
			if req.IsNotification() {
				c.h.log.Debug("notification outside the negotiated version ignored", "method", clip(req.Method, maxLoggedValue), "version", version)
				return nil, nil
			}
			return nil, rpcError(protocol.CodeMethodNotFound, "%s is not part of protocol version %s", req.Method, version)
		}
	}
	if r.serve == nil {
		return nil, rpcError(protocol.CodeMethodNotFound, "%s is not supported by this host", req.Method)
	}
	in.params = r.m.NewParams()
	missing, err := decodeParams(req.Method, req.Params, in.params, r.optional, r.strict)
	in.missing = missing
	if err != nil {
		if req.IsNotification() {
			if req.Method == "dispatchAction" {
				// Rejected, so that the client can roll its optimistic
				// copy back, rather than dropped.
				c.h.rejectUndecodable(ctx, c, req.Params, err)
				return nil, nil
			}
			c.h.log.Debug("notification with bad params dropped", "client", clip(c.id(), maxLoggedValue), "method", clip(req.Method, maxLoggedValue), "err", clip(err.Error(), maxLoggedValue))
		}
		return nil, err
	}
	if !r.locked {
		return r.serve(in)
	}
	err = c.h.locked(ctx, func(rd *storeReads) (change, error) {
		apply, err := r.serveLocked(in, rd, req)
		var miss *storeMiss
		if err == nil || errors.As(err, &miss) {
			return apply, err
		}
		return func() error {
			req.Reply(nil, err)
			c.h.releaseHeldLocked()
			return nil
		}, nil
	})
	if err != nil {
		return nil, rpcError(protocol.CodeInternalError, "%s: %v", req.Method, err)
	}
	return nil, nil
}

// decodeParams decodes params into p, answering bad params with -32602
// whose message names the member at fault. Members present with a value
// their schema type does not allow (null for a required member, a string
// outside an enumeration) are bad params for every method. With strict,
// required members that are absent, and optional members sent as null, do
// not fail the decoding: they are returned, for the handler to reject;
// otherwise an absent member decodes as its zero value and a null optional
// one as absent.
func decodeParams(method string, params jsontext.Value, p any, optional, strict bool) (*protocol.MissingError, error) {
	if len(params) == 0 {
		if optional {
			return nil, nil
		}
		return nil, rpcError(protocol.CodeInvalidParams, "%s: params are required", method)
	}
	if !strict {
		if err := protocol.UnmarshalChecked(params, p); err != nil {
			return nil, rpcError(protocol.CodeInvalidParams, "%s: %v", method, err)
		}
		return nil, nil
	}
	var missing *protocol.MissingError
	if err := protocol.UnmarshalStrict(params, p); errors.As(err, &missing) {
		return missing, nil
	} else if err != nil {
		return nil, rpcError(protocol.CodeInvalidParams, "%s: %s", method, protocol.DescribeError(err))
	}
	return nil, nil
}

func (c *conn) ping(context.Context, *protocol.PingParams) (*none, error) { return nil, nil }

// initializeLocked negotiates the protocol version, subscribes to the
// initial channels and answers with their snapshots. It is a step (see
// step): the snapshots are read first, the subscriptions made in the
// change.
func (c *conn) initializeLocked(ctx context.Context, rd *storeReads, p *protocol.InitializeParams) (func() (*protocol.InitializeResult, error), error) {
	version, err := protocol.Negotiate(p.ProtocolVersions)
	if err != nil {
		var uv *protocol.UnsupportedVersionError
		if errors.As(err, &uv) {
			// versioning.md: answer -32005, then close the connection. The
			// close waits for the lock, so the answer leaves first.
			return func() (*protocol.InitializeResult, error) {
				go c.closeWith(errUnsupportedVersion)
				return nil, uv.RPCError()
			}, nil
		}
		return nil, rpcError(protocol.CodeInvalidParams, "initialize: %v", err)
	}
	if p.ClientID == "" {
		return nil, rpcError(protocol.CodeInvalidParams, "initialize: clientId is required")
	}
	h := c.h
	if c.initialized {
		return nil, rpcError(protocol.CodeInvalidRequest, "initialize: the connection is already initialized")
	}
	res := &protocol.InitializeResult{
		ProtocolVersion: version,
		ServerSeq:       h.seq,
		ServerInfo:      &h.opts.ServerInfo,
		Snapshots:       []protocol.Snapshot{},
	}
	if h.opts.DefaultDirectory != "" {
		res.DefaultDirectory = protocol.Ptr(h.opts.DefaultDirectory)
	}
	res.Meta = initializeMeta
	res.Automations = h.automationCapabilities()
	res.CompletionTriggerCharacters = completionTriggers
	var subs []pendingSub
	failed := map[string]error{}
	for _, uri := range p.InitialSubscriptions {
		ps, ok, err := h.prepareSubLocked(rd, uri, nil)
		var miss *storeMiss
		switch {
		case errors.As(err, &miss):
			return nil, err
		case err != nil:
			// Reading it failed: answer without it.
			failed[uri] = err
		case ok:
			subs = append(subs, ps)
			res.Snapshots = append(res.Snapshots, ps.snap)
		}
	}
	return func() (*protocol.InitializeResult, error) {
		for uri, err := range failed {
			h.log.Error("an initial subscription failed", "client", clip(p.ClientID, maxLoggedValue), "channel", clip(uri, maxLoggedValue), "err", err)
		}
		c.setIdentityLocked(p.ClientID, version)
		for _, ps := range subs {
			c.addSubLocked(ps)
		}
		res.Snapshots = c.view.Snapshots(res.Snapshots)
		return c.view.InitializeResult(res), nil
	}, nil
}

// initializeMeta is the host's InitializeResult._meta: under its own
// namespaced key, the older protocol versions it still serves beside the
// 1.x ones. Clients ignore keys they do not understand.
var initializeMeta = func() map[string]jsontext.Value {
	legacy, _ := protocol.Marshal(map[string]any{"legacyProtocolVersions": protocol.LegacyVersions()})
	return map[string]jsontext.Value{"ahp-go/host": legacy}
}()

func (c *conn) setIdentityLocked(clientID, version string) {
	c.initialized = true
	c.initTimer.Stop()
	c.clientID = clientID
	c.version = version
	c.view = view.For(version)
	clear(c.known)
	c.h.versions.Put(clientID, version)
}

// pendingSub is a subscription ready to be added, with its snapshot.
type pendingSub struct {
	ch        *channel
	snap      protocol.Snapshot
	turnsFrom int64
}

// prepareSubLocked returns the snapshot of a channel for a new
// subscription, without subscribing. Unknown channels give false; a
// channel whose data is still in the store gives a *storeMiss (see step).
func (h *Host) prepareSubLocked(rd *storeReads, uri string, window *protocol.SubscribeView) (pendingSub, bool, error) {
	ch, err := h.channelLocked(rd, uri)
	if err != nil || ch == nil {
		return pendingSub{}, false, err
	}
	turns := -1
	if window != nil && window.Turns != nil {
		turns = int(max(*window.Turns, 0))
	}
	state, err := h.snapshotStateLocked(rd, ch, turns)
	if err != nil {
		return pendingSub{}, false, err
	}
	return pendingSub{ch: ch, snap: protocol.Snapshot{Resource: uri, State: state, FromSeq: h.seq}, turnsFrom: windowStart(ch, turns)}, true, nil
}

func (c *conn) addSubLocked(ps pendingSub) {
	sub := &subscription{ch: ps.ch, turnsFrom: ps.turnsFrom}
	ps.ch.subs[c] = sub
	c.subs[ps.ch.uri] = sub
}

// subscribeLocked is a step (see step): it reads the snapshot, then
// subscribes.
func (c *conn) subscribeLocked(ctx context.Context, rd *storeReads, p *protocol.SubscribeParams) (func() (*protocol.SubscribeResult, error), error) {
	if err := check.ChannelURI(p.Channel); err != nil {
		return nil, rpcError(protocol.CodeInvalidParams, "subscribe: %v", err)
	}
	ps, ok, err := c.h.prepareSubLocked(rd, p.Channel, p.View)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, rpcError(protocol.CodeNotFound, "subscribe: no channel %s", p.Channel)
	}
	return func() (*protocol.SubscribeResult, error) {
		c.addSubLocked(ps)
		snap := ps.snap
		snap.State = c.view.State(snap.State)
		return &protocol.SubscribeResult{Snapshot: &snap}, nil
	}, nil
}

func (c *conn) unsubscribe(ctx context.Context, p *protocol.UnsubscribeParams) (*none, error) {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if sub, ok := c.subs[p.Channel]; ok {
		delete(sub.ch.subs, c)
		delete(c.subs, p.Channel)
		h.leaveSessionLocked(c.clientID, sub.ch)
		h.unsubscribedLocked(c, sub.ch)
	}
	return nil, nil
}

// reconnectReply is the reconnect result in one of its two forms.
type reconnectReply struct {
	replay   *replayResult
	snapshot *protocol.ReconnectSnapshotResult
}

func (r *reconnectReply) MarshalJSONTo(enc *jsontext.Encoder) error {
	if r.replay != nil {
		return r.replay.MarshalJSONTo(enc)
	}
	return r.snapshot.MarshalJSONTo(enc)
}

// reconnectLocked resumes a client's subscriptions after a lost
// connection: a replay of what it missed when the replay log still holds
// it, fresh snapshots otherwise. Channels that no longer exist are listed
// as missing. It is a step (see step): everything is read before anything
// changes, so a failed read changes nothing.
func (c *conn) reconnectLocked(ctx context.Context, rd *storeReads, p *protocol.ReconnectParams) (func() (*reconnectReply, error), error) {
	if p.ClientID == "" {
		return nil, rpcError(protocol.CodeInvalidParams, "reconnect: clientId is required")
	}
	h := c.h
	version := c.version
	unknown := false
	if !c.initialized {
		// A reconnect opens the new connection with the version the client
		// negotiated before. A client the host does not remember (it
		// restarted, or forgot the client) gets fresh snapshots, as
		// lifecycle.md has a restarted server do, in the newest version
		// the host speaks: reconnect carries no versions to choose from
		// (docs/protocol.md, "Reconnecting").
		version = h.versions.Get(p.ClientID)
		if version == "" {
			var ok bool
			if version, ok = reconnectVersion(p.Meta); !ok {
				return nil, rpcError(protocol.CodeInvalidRequest, "reconnect: this host does not know client %q and speaks none of the versions it lists; send initialize", clip(p.ClientID, maxLoggedValue))
			}
			unknown = true
		}
	}
	wanted := map[string]bool{}
	missing := []string{}
	var found []*channel
	for _, uri := range p.Subscriptions {
		ch, err := h.channelLocked(rd, uri)
		if err != nil {
			return nil, err
		}
		if ch == nil {
			missing = append(missing, uri)
			continue
		}
		wanted[uri] = true
		found = append(found, ch)
	}
	var reply reconnectReply
	// The serverSeq an unknown client saw may be another run's: only
	// snapshots are safe.
	var entries []replay.Entry
	replayed := false
	if p.LastSeenServerSeq <= h.seq && !unknown {
		entries, replayed = h.replay.Since(p.LastSeenServerSeq, wanted)
	}
	if !replayed {
		reply.snapshot = &protocol.ReconnectSnapshotResult{Snapshots: []protocol.Snapshot{}}
		for _, ch := range found {
			state, err := h.snapshotStateLocked(rd, ch, -1)
			if err != nil {
				return nil, err
			}
			reply.snapshot.Snapshots = append(reply.snapshot.Snapshots, protocol.Snapshot{Resource: ch.uri, State: view.For(version).State(state), FromSeq: h.seq})
		}
	}
	return func() (*reconnectReply, error) {
		if replayed {
			reply.replay = &replayResult{Actions: make([]rawEnvelope, 0, len(entries)), Missing: missing}
			c.version = version // knowsLocked answers for the new version
			c.view = view.For(version)
			clear(c.known)
			for _, e := range entries {
				if c.knowsLocked(e.ActionType) {
					reply.replay.Actions = append(reply.replay.Actions, c.replayedLocked(e))
				}
			}
		}
		c.setIdentityLocked(p.ClientID, version)
		for _, ch := range found {
			from := int64(-1)
			if reply.snapshot != nil {
				from = 0
			}
			c.addSubLocked(pendingSub{ch: ch, turnsFrom: from})
		}
		return &reply, nil
	}, nil
}

// ReconnectVersionsMeta is the reconnect params' _meta key under which a
// client may name the version it negotiated (a list, newest first, like
// initialize's protocolVersions). A host that does not know the client
// (it restarted) then speaks the newest of them it shares, and refuses the
// reconnect with -32600 when it shares none, so the client initializes
// again; other hosts ignore the key, as _meta keys they do not understand
// are.
const ReconnectVersionsMeta = "ahp-go/protocolVersions"

// reconnectVersion is the version of a reconnect from a client the host
// does not remember: the newest shared with the versions the client lists
// in _meta, else, when it lists none, the host's newest. ok is false when
// it lists versions and the host speaks none of them.
func reconnectVersion(meta map[string]jsontext.Value) (version string, ok bool) {
	raw, listed := meta[ReconnectVersionsMeta]
	if !listed {
		return protocol.ProtocolVersion, true
	}
	var offered []string
	if err := protocol.Unmarshal(raw, &offered); err != nil || len(offered) == 0 {
		return protocol.ProtocolVersion, true
	}
	v, err := protocol.Negotiate(offered)
	return v, err == nil
}

// dispatchAction validates and applies a client action. Accepted actions
// are echoed to every subscriber with the client's origin; rejected ones
// are echoed to the sender alone with a rejection reason.
func (c *conn) dispatchAction(ctx context.Context, p *protocol.DispatchActionParams, missing *protocol.MissingError) (*none, error) {
	if c.h.confineAction(c, p) {
		return nil, nil
	}
	c.h.dispatchClient(ctx, c, p, missing)
	return nil, nil
}

// listSessions answers with a page already encoded as the connection's
// version sees it (Host.listSessionsEncoded).
func (c *conn) listSessions(ctx context.Context, p *protocol.ListSessionsParams) (*jsonrpc.Encoded, error) {
	res, err := c.h.listSessionsEncoded(ctx, p, c.view)
	if err != nil {
		return nil, err
	}
	return (*jsonrpc.Encoded)(&res), nil
}

func (c *conn) disposeSession(ctx context.Context, p *protocol.DisposeSessionParams) (*none, error) {
	return nil, c.h.disposeSession(ctx, p)
}

func (c *conn) disposeChat(ctx context.Context, p *protocol.DisposeChatParams) (*none, error) {
	return nil, c.h.disposeChat(ctx, p)
}

// fetchTurnsLocked sends the client a page of older turns, then answers.
// It is a step (see step): the page is read first.
func (c *conn) fetchTurnsLocked(ctx context.Context, rd *storeReads, p *protocol.FetchTurnsParams) (func() (*protocol.FetchTurnsResult, error), error) {
	h := c.h
	ch, err := h.channelLocked(rd, p.Channel)
	if err != nil {
		return nil, err
	}
	if ch == nil || ch.kind != protocol.ChannelChat {
		return nil, rpcError(protocol.CodeNotFound, "fetchTurns: no chat %s", p.Channel)
	}
	// Without a cursor the page is the one before the oldest turn this
	// client holds: its own window, not the host's.
	end := ch.chat.base
	sub := c.subs[ch.uri]
	if sub != nil && sub.turnsFrom >= 0 {
		end = sub.turnsFrom
	}
	if p.Cursor != nil {
		if end, err = parseTurnsCursor(p.Cursor); err != nil {
			return nil, rpcError(protocol.CodeInvalidParams, "fetchTurns: %v", err)
		}
	}
	action, start, err := h.turnsPageLocked(rd, ch, end)
	if err != nil {
		return nil, err
	}
	return func() (*protocol.FetchTurnsResult, error) {
		if sub != nil && (sub.turnsFrom < 0 || start < sub.turnsFrom) {
			sub.turnsFrom = start
		}
		// The schema asks for the page before the reply. It goes to this
		// client alone: other clients and the host's own state may
		// already hold these turns, and each client's window is its own.
		c.sendLocked(h.privateEnvelope(c.view, ch.uri, action, nil, ""))
		return &protocol.FetchTurnsResult{}, nil
	}, nil
}
