package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"github.com/google/uuid"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
	"github.com/ahp-go/ahp/reducer"
)

// Defaults for Options.
const (
	DefaultMaxMessageBytes   = 64 << 20
	DefaultStreamBuffer      = 4096
	DefaultReconnectDelay    = 250 * time.Millisecond
	DefaultMaxReconnectDelay = 15 * time.Second
)

// attemptTimeout bounds one reconnection attempt: dialing and the reconnect
// request.
const attemptTimeout = 30 * time.Second

// Options configures a Client. The zero value is ready to use; a nil
// *Options means the zero value.
type Options struct {
	// ClientID identifies the client to the host across reconnections.
	// Empty means a random UUID.
	ClientID string
	// ClientInfo describes the client implementation in initialize. Nil
	// means name "ahp-go".
	ClientInfo *protocol.Implementation
	// Locale is the client's preferred language (a BCP 47 tag) sent in
	// initialize; empty sends none.
	Locale string
	// ProtocolVersions are the versions the handshake offers, preferred
	// first. Empty means every version this package supports, newest
	// first.
	ProtocolVersions []string
	// InitialSubscriptions are the channels the handshake subscribes to;
	// Subscribe then attaches to them without asking the host again.
	InitialSubscriptions []string

	// Token, when set, is sent as "Authorization: Bearer <token>" on the
	// WebSocket handshake. Connect and Dial only.
	Token string
	// HTTPHeader holds more headers for the WebSocket handshake. Dial
	// only.
	HTTPHeader http.Header
	// HTTPClient makes the WebSocket handshake. Nil means
	// http.DefaultClient. Connect and Dial only.
	HTTPClient *http.Client

	// MaxMessageBytes bounds an incoming message. Zero means
	// DefaultMaxMessageBytes.
	MaxMessageBytes int64

	// Handlers answer the requests the host sends to the client (the
	// resource* family and createResourceWatch), one typed function per
	// method. A method whose function is nil is answered with a
	// method-not-found error.
	Handlers Handlers

	// OnConnection, when set, is told about connection losses and
	// reconnections, one event at a time, in order, on a goroutine of the
	// client's.
	OnConnection func(ConnectionEvent)

	// ReconnectDelay is the base of the exponential backoff between
	// reconnection attempts, and MaxReconnectDelay its cap; each wait is
	// drawn at random between zero and the current bound ("full jitter").
	// Zero means DefaultReconnectDelay and DefaultMaxReconnectDelay.
	ReconnectDelay    time.Duration
	MaxReconnectDelay time.Duration
	// MaxReconnectAttempts is how many attempts to reconnect are made
	// after a connection loss before the client gives up. Zero means no
	// limit; a negative value disables reconnection.
	MaxReconnectAttempts int

	// StreamBuffer bounds each subscription's queue of unread events
	// (see Subscription.Next). Zero means DefaultStreamBuffer.
	StreamBuffer int

	// Now is the clock the reducers use to stamp modifiedAt on mirrored
	// state. Nil means time.Now.
	Now func() time.Time

	// Logger receives the client's logs. Nil discards them.
	Logger *slog.Logger
}

// A Dialer opens a new transport to the host. The client calls it once to
// connect and again for every reconnection attempt.
type Dialer func(ctx context.Context) (jsonrpc.Transport, error)

// Client is a connection to an AHP host that mirrors the channels it
// subscribes to and survives connection losses.
//
// All methods are safe for concurrent use. Methods that talk to the host
// take a context that bounds the wait for the answer (and, while the
// client is reconnecting, the wait for the connection to come back); an
// ended context returns ctx.Err() at once.
type Client struct {
	opts Options
	dial Dialer
	red  reducer.Reducer
	log  *slog.Logger
	id   string

	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // goroutines the client owns
	events *eventPump

	// dispatchMu orders Dispatch calls so that the pending list, the
	// clientSeq numbers and the order on the wire agree.
	dispatchMu sync.Mutex
	clientSeq  int64

	// mu guards what follows, the mirrors and the subscriptions. Nothing
	// blocks while it is held. Lock order: dispatchMu, mu, then the locks
	// of links, queues and receipts.
	mu          sync.Mutex
	link        *link         // nil while reconnecting
	linkUp      chan struct{} // closed when link is set
	initialized bool
	version     string
	view        *view.View                // the negotiated version's shapes
	initParams  protocol.InitializeParams // what Initialize sent, for initializing again
	initResult  *protocol.InitializeResult
	lastSeq     int64 // highest serverSeq seen
	channels    map[string]*feed
	closed      bool
	err         error // why the client stopped, nil after Close
	done        chan struct{}
}

// feed is a channel the client follows: its mirror (nil for a channel
// without state) and the subscriptions sharing it.
type feed struct {
	uri  string
	m    *mirror
	subs []*Subscription
}

// Connect connects to the host's WebSocket endpoint at url (ws:// or
// wss://) and performs the handshake: the client it returns is
// initialized, and InitializeResult holds what the host answered. ctx
// bounds both steps. When the handshake fails, the connection is closed.
//
// Callers that need the two steps apart (to send initialize params of
// their own, or to test the handshake) use Dial and then Initialize.
func Connect(ctx context.Context, url string, opts *Options) (*Client, error) {
	return ConnectTransport(ctx, webSocketDialer(url, opts), opts)
}

// ConnectTransport is Connect over any transport: dial opens it, now and
// on every reconnection.
func ConnectTransport(ctx context.Context, dial Dialer, opts *Options) (*Client, error) {
	c, err := DialTransport(ctx, dial, opts)
	if err != nil {
		return nil, err
	}
	if _, err := c.Initialize(ctx, nil); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Dial connects to the host's WebSocket endpoint at url without the
// handshake: the returned client is connected but not initialized, and
// Initialize comes next. ctx bounds the connection attempt only. Most
// callers want Connect.
func Dial(ctx context.Context, url string, opts *Options) (*Client, error) {
	return DialTransport(ctx, webSocketDialer(url, opts), opts)
}

func webSocketDialer(url string, opts *Options) Dialer {
	var o Options
	if opts != nil {
		o = *opts
	}
	header := o.HTTPHeader.Clone()
	if header == nil {
		header = http.Header{}
	}
	if o.Token != "" {
		header.Set("Authorization", "Bearer "+o.Token)
	}
	wsOpts := &jsonrpc.WebSocketOptions{HTTPHeader: header, HTTPClient: o.HTTPClient}
	return func(ctx context.Context) (jsonrpc.Transport, error) {
		t, resp, err := jsonrpc.DialWebSocket(ctx, url, wsOpts)
		if err != nil {
			de := &DialError{URL: url, Err: err}
			if resp != nil {
				de.StatusCode = resp.StatusCode
			}
			return nil, de
		}
		return t, nil
	}
}

// DialTransport is Dial over any transport: dial opens it, now and on
// every reconnection.
func DialTransport(ctx context.Context, dial Dialer, opts *Options) (*Client, error) {
	c := newClient(dial, opts)
	t, err := dial(ctx)
	if err != nil {
		c.cancel()
		return nil, err
	}
	l := newLink(c, t)
	c.link = l
	close(c.linkUp)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.supervise(l)
	}()
	return c, nil
}

func newClient(dial Dialer, opts *Options) *Client {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ClientID == "" {
		o.ClientID = NewID()
	}
	if o.ClientInfo == nil {
		o.ClientInfo = &protocol.Implementation{Name: "ahp-go"}
	}
	if o.MaxMessageBytes <= 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if o.ReconnectDelay <= 0 {
		o.ReconnectDelay = DefaultReconnectDelay
	}
	if o.MaxReconnectDelay <= 0 {
		o.MaxReconnectDelay = DefaultMaxReconnectDelay
	}
	if o.StreamBuffer <= 0 {
		o.StreamBuffer = DefaultStreamBuffer
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Client{
		opts:     o,
		view:     view.Current,
		dial:     dial,
		red:      reducer.Reducer{Now: o.Now},
		log:      o.Logger,
		id:       o.ClientID,
		linkUp:   make(chan struct{}),
		channels: map[string]*feed{},
		done:     make(chan struct{}),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	if o.OnConnection != nil {
		c.events = newEventPump(o.OnConnection)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.events.run(c.ctx)
		}()
	}
	return c
}

// NewID returns a random UUID (version 4), suitable for client IDs, session
// URIs (protocol.SessionURI(NewID())) and turn IDs.
func NewID() string {
	return uuid.NewString()
}

// ID returns the client ID the client presents to the host.
func (c *Client) ID() string { return c.id }

// ProtocolVersion returns the protocol version negotiated by Initialize,
// or "" before.
func (c *Client) ProtocolVersion() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.version
}

// InitializeResult returns what the host answered to the handshake, or nil
// before Initialize has succeeded. It is not changed by reconnections and
// must not be modified.
func (c *Client) InitializeResult() *protocol.InitializeResult {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.initResult
}

// Done returns a channel that is closed when the client stops: after Close,
// or when it gives up reconnecting.
func (c *Client) Done() <-chan struct{} { return c.done }

// Err returns nil while the client runs and after Close. When the client
// stopped on its own, it returns why: the connection was lost before
// Initialize, or reconnecting failed for good.
func (c *Client) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Close closes the connection, ends every subscription and waits for the
// client's goroutines to return. It must not be called from a watch
// function or an OnConnection callback.
func (c *Client) Close() error {
	c.stop(nil)
	c.wg.Wait()
	return nil
}

// stop ends the client for cause (nil for Close).
func (c *Client) stop(cause error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	c.err = cause
	l := c.link
	c.link = nil
	endErr := ErrClosed
	if cause != nil {
		endErr = fmt.Errorf("%w: %w", ErrClosed, cause)
	}
	for uri, ch := range c.channels {
		for _, s := range ch.subs {
			s.endLocked(endErr)
		}
		if ch.m != nil {
			for _, p := range ch.m.clearPending() {
				if p.receipt != nil {
					p.receipt.resolve(endErr)
				}
			}
		}
		delete(c.channels, uri)
	}
	close(c.done)
	c.mu.Unlock()
	c.cancel()
	if l != nil {
		l.rpc.Close()
	}
}

// current returns the live connection, waiting for it while the client is
// reconnecting. With needInit it fails before Initialize has succeeded.
func (c *Client) current(ctx context.Context, needInit bool) (*link, error) {
	for {
		c.mu.Lock()
		if c.closed {
			err := c.err
			c.mu.Unlock()
			if err != nil {
				return nil, fmt.Errorf("%w: %w", ErrClosed, err)
			}
			return nil, ErrClosed
		}
		if needInit && !c.initialized {
			c.mu.Unlock()
			return nil, ErrNotInitialized
		}
		if l := c.link; l != nil {
			if l.rpc.Err() == nil {
				c.mu.Unlock()
				return l, nil
			}
			// Lost, though the supervisor has not noticed yet.
			c.link = nil
			c.linkUp = make(chan struct{})
		}
		up := c.linkUp
		c.mu.Unlock()
		select {
		case <-up:
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Initialize performs the handshake on a client made by Dial; Connect
// calls it itself. Nil params, or params with fields left empty, mean
// what Options says: Options.ProtocolVersions (or, when that is empty,
// every protocol version this package supports, newest first), the
// client's ID, Options.ClientInfo, Options.Locale and
// Options.InitialSubscriptions. Channels
// named in InitialSubscriptions are mirrored from the snapshots in the
// result; Subscribe attaches to them without asking the host again.
//
// Once Initialize has succeeded, the client reconnects on its own after a
// connection loss. Before, a loss stops the client.
func (c *Client) Initialize(ctx context.Context, p *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	var q protocol.InitializeParams
	if p != nil {
		q = *p
	}
	if len(q.ProtocolVersions) == 0 {
		q.ProtocolVersions = c.opts.ProtocolVersions
	}
	if len(q.ProtocolVersions) == 0 {
		q.ProtocolVersions = protocol.SupportedVersions()
	}
	if q.InitialSubscriptions == nil {
		q.InitialSubscriptions = c.opts.InitialSubscriptions
	}
	if q.ClientID == "" {
		q.ClientID = c.id
	} else if q.ClientID != c.id {
		return nil, fmt.Errorf("ahp: initialize: clientId %q differs from the client's ID %q; set Options.ClientID instead", q.ClientID, c.id)
	}
	if q.ClientInfo == nil {
		q.ClientInfo = c.opts.ClientInfo
	}
	if q.Locale == nil && c.opts.Locale != "" {
		q.Locale = &c.opts.Locale
	}
	l, err := c.current(ctx, false)
	if err != nil {
		return nil, err
	}
	var res protocol.InitializeResult
	err = l.orderedCall(ctx, "initialize", &q, func(raw jsontext.Value) error {
		if err := protocol.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("ahp: initialize: decoding the result: %w", err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.initialized = true
		c.initResult = &res
		c.initParams = q
		c.initParams.InitialSubscriptions = nil
		c.version = res.ProtocolVersion
		c.view = view.For(res.ProtocolVersion)
		c.lastSeq = max(c.lastSeq, res.ServerSeq)
		for i := range res.Snapshots {
			snap := &res.Snapshots[i]
			if snap.State == nil {
				continue
			}
			c.upLocked(snap)
			c.lastSeq = max(c.lastSeq, snap.FromSeq)
			c.channels[snap.Resource] = &feed{uri: snap.Resource, m: newMirror(c.id, c.red, snap)}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &res, nil
}

// Subscribe subscribes to a channel and returns the subscription, which
// holds the channel's snapshot, mirrors its state from then on and streams
// what arrives on it. When the client already follows the channel, the
// new subscription shares its mirror and p's delivery and view
// preferences are not sent again.
func (c *Client) Subscribe(ctx context.Context, p *protocol.SubscribeParams) (*Subscription, error) {
	if p == nil || p.Channel == "" {
		return nil, errors.New("ahp: subscribe: a channel is required")
	}
	if _, err := protocol.ParseChannel(p.Channel); err != nil {
		// Clients name sessions with schemes of their own; any absolute
		// URI may be one.
		if !errors.Is(err, protocol.ErrUnknownChannelScheme) || protocol.CheckURI(p.Channel) != nil {
			return nil, fmt.Errorf("ahp: subscribe: %w", err)
		}
	}
	l, err := c.current(ctx, true)
	if err != nil {
		return nil, err
	}
	uri := p.Channel
	s := newSubscription(c, uri)
	c.mu.Lock()
	if ch := c.channels[uri]; ch != nil {
		s.attachLocked(ch)
		c.mu.Unlock()
		return s, nil
	}
	c.mu.Unlock()
	err = l.orderedCall(ctx, "subscribe", p, func(raw jsontext.Value) error {
		var res protocol.SubscribeResult
		if err := protocol.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("ahp: subscribe: decoding the result: %w", err)
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if res.Snapshot != nil && res.Snapshot.State != nil {
			c.upLocked(res.Snapshot)
		}
		ch := c.channels[uri]
		switch {
		case ch == nil:
			ch = &feed{uri: uri}
			c.channels[uri] = ch
			if res.Snapshot != nil && res.Snapshot.State != nil {
				ch.m = newMirror(c.id, c.red, res.Snapshot)
			}
		case res.Snapshot != nil && res.Snapshot.State != nil && ch.m != nil:
			// Two first subscriptions raced; the later snapshot is as new
			// as anything received.
			ch.m.reset(res.Snapshot)
		}
		if res.Snapshot != nil {
			c.lastSeq = max(c.lastSeq, res.Snapshot.FromSeq)
		}
		if s.abandoned {
			if len(ch.subs) == 0 {
				c.dropLocked(ch, nil)
			}
			return nil
		}
		s.attachLocked(ch)
		if res.Snapshot != nil {
			s.snap = *res.Snapshot
		}
		return nil
	})
	if err != nil {
		c.mu.Lock()
		s.abandoned = true
		attached := s.ch != nil
		c.mu.Unlock()
		if attached {
			c.detach(s, ErrClosed)
		}
		return nil, err
	}
	return s, nil
}

// attachLocked adds s to ch; a subscription joining a followed channel
// starts from its confirmed state.
func (s *Subscription) attachLocked(ch *feed) {
	s.ch = ch
	ch.subs = append(ch.subs, s)
	if ch.m != nil {
		s.snap = protocol.Snapshot{Resource: ch.uri, State: ch.m.confirmed, FromSeq: ch.m.seq}
	} else {
		s.snap = protocol.Snapshot{Resource: ch.uri}
	}
}

// detach ends s; when it was the last subscription to its channel, the
// channel is dropped and the host told.
func (c *Client) detach(s *Subscription, err error) {
	c.mu.Lock()
	ch := s.ch
	s.endLocked(err)
	if ch == nil || c.channels[ch.uri] != ch {
		c.mu.Unlock()
		return
	}
	for i, t := range ch.subs {
		if t == s {
			ch.subs = append(ch.subs[:i], ch.subs[i+1:]...)
			break
		}
	}
	if len(ch.subs) == 0 {
		c.dropLocked(ch, err)
	}
	c.mu.Unlock()
}

// dropLocked stops following a channel and tells the host, in the
// background.
func (c *Client) dropLocked(ch *feed, err error) {
	delete(c.channels, ch.uri)
	for _, s := range ch.subs {
		s.endLocked(err)
	}
	ch.subs = nil
	if l := c.link; l != nil && !c.closed {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.unsubscribe(l, ch.uri)
		}()
	}
}

func (c *Client) unsubscribe(l *link, uri string) {
	ctx, cancel := context.WithTimeout(c.ctx, 5*time.Second)
	defer cancel()
	if err := l.rpc.Notify(ctx, "unsubscribe", &protocol.UnsubscribeParams{Channel: uri}); err != nil {
		c.log.Debug("unsubscribe not sent", "channel", uri, "err", err)
	}
}

// Unsubscribe stops following a channel: every subscription to it ends
// with ErrClosed and the host is told.
func (c *Client) Unsubscribe(ctx context.Context, channel string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.channels[channel]; ch != nil {
		c.dropLocked(ch, ErrClosed)
	}
	return nil
}

// Dispatch applies a client action to the channel's mirror at once and
// sends it to the host. The returned receipt settles when the host echoes
// the action (accepted) or rejects it; by then the optimistic effect has
// been confirmed or reverted.
//
// The action may target a channel the client does not follow, for
// instance to answer an input request listed in a session's inputNeeded;
// see Receipt.Err for what the receipt reports then.
func (c *Client) Dispatch(ctx context.Context, channel string, action protocol.StateAction) (*Receipt, error) {
	if action == nil {
		return nil, errors.New("ahp: dispatchAction: no action")
	}
	if !protocol.ClientDispatchable(action.Type()) {
		return nil, fmt.Errorf("ahp: dispatchAction: %s is not an action clients may dispatch", action.Type())
	}
	c.dispatchMu.Lock()
	defer c.dispatchMu.Unlock()
	var (
		l      *link
		r      *Receipt
		ch     *feed
		shaped protocol.StateAction // action as the negotiated version sends it
	)
	for {
		var err error
		l, err = c.current(ctx, true)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if c.link != l {
			c.mu.Unlock()
			continue // the connection changed meanwhile
		}
		c.clientSeq++
		shaped = c.view.Action(action)
		r = newReceipt(channel, c.clientSeq, action)
		if ch = c.channels[channel]; ch != nil && ch.m != nil {
			ch.m.dispatch(pendingAction{clientSeq: r.ClientSeq, action: action, receipt: r})
			ch.signalLocked()
		} else {
			ch = nil
		}
		c.mu.Unlock()
		break
	}
	err := l.rpc.Notify(ctx, "dispatchAction", &protocol.DispatchActionParams{Channel: channel, ClientSeq: r.ClientSeq, Action: shaped})
	if err != nil {
		c.mu.Lock()
		if ch != nil && ch.m.withdraw(r.ClientSeq) {
			ch.signalLocked()
		}
		c.mu.Unlock()
		err = wrapCallError("dispatchAction", err)
		r.resolve(err)
		return nil, err
	}
	if ch == nil {
		r.resolve(nil)
	}
	return r, nil
}

func (ch *feed) signalLocked() {
	for _, s := range ch.subs {
		s.signalLocked()
	}
}

// handleNotification handles a notification from the host, on the
// reader goroutine, in arrival order.
func (c *Client) handleNotification(method string, raw jsontext.Value) {
	if method == "action" {
		env := new(protocol.ActionEnvelope)
		if err := protocol.Unmarshal(raw, env); err != nil {
			c.log.Warn("undecodable action envelope dropped", "err", err)
			return
		}
		c.mu.Lock()
		c.receiveLocked(env, false)
		c.mu.Unlock()
		return
	}
	m, ok := protocol.LookupMethod(method)
	if !ok || !m.FromServer || !m.Notification {
		c.log.Debug("unknown notification ignored", "method", method)
		return
	}
	v := c.shapes()
	raw, err := v.UpNotificationJSON(method, raw)
	params := m.NewParams()
	if err == nil {
		err = protocol.Unmarshal(raw, params)
	}
	if err != nil {
		c.log.Warn("undecodable notification dropped", "method", method, "err", err)
		return
	}
	params = v.UpNotification(params)
	uri := channelOf(params)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.channels[uri]; ch != nil {
		ev := Event{Notification: &Notification{Method: method, Params: params}}
		for _, s := range ch.subs {
			s.q.push(ev)
		}
	}
	if p, ok := params.(*protocol.SessionRemovedParams); ok {
		// The session is disposed: its subscriptions end. The host tells
		// the session's subscribers even when they do not follow the root.
		c.goneLocked(p.Session)
	}
}

// upLocked brings a snapshot the host sent in the negotiated version's
// shapes up to 1.x, which mirrors hold.
func (c *Client) upLocked(snap *protocol.Snapshot) {
	snap.State = c.view.UpState(snap.Resource, snap.State)
}

// channelOf returns the channel a notification's params name, or "" for
// params that name none.
func channelOf(params any) string {
	if m, ok := params.(protocol.ChannelMessage); ok {
		return m.ChannelURI()
	}
	return ""
}

// receiveLocked reconciles one envelope from the host.
func (c *Client) receiveLocked(env *protocol.ActionEnvelope, replayed bool) {
	// Mirrors hold 1.x shapes whatever the version: an older host's
	// actions come up first.
	env = c.view.UpEnvelope(env)
	c.lastSeq = max(c.lastSeq, env.ServerSeq)
	if rm, ok := env.Action.(*protocol.SessionChatRemovedAction); ok && env.RejectionReason == nil {
		// The chat left the session's catalog: it was disposed
		// (chat-channel.md, Disposal; the host sends this to the chat's
		// subscribers too), or moved to another session (moveChat),
		// where it lives on under its URI. Which one, the envelope does
		// not say: the client asks the host.
		c.checkChatLocked(rm.Chat)
	}
	ch := c.channels[env.Channel]
	if ch == nil {
		return
	}
	if ch.m != nil {
		out := ch.m.receive(env)
		if p := out.settled; p != nil && p.receipt != nil {
			if env.RejectionReason != nil {
				p.receipt.resolve(&RejectedError{Channel: env.Channel, Action: p.action, ClientSeq: p.clientSeq, Reason: *env.RejectionReason})
			} else {
				p.receipt.resolve(nil)
			}
		}
		if out.changed {
			ch.signalLocked()
		}
	}
	ev := Event{Envelope: env, Replayed: replayed}
	for _, s := range ch.subs {
		s.q.push(ev)
	}
}

// checkChatLocked finds out whether a chat the client follows still
// exists after it left its session's catalog: subscribing again answers
// with the chat's snapshot when it moved, and with -32008 when it was
// disposed; then its subscriptions end. The mirror is current either way
// (the answer follows every action sent before it), so the snapshot is
// not needed.
func (c *Client) checkChatLocked(uri string) {
	ch := c.channels[uri]
	if ch == nil || c.closed {
		return
	}
	c.wg.Go(func() {
		ctx, cancel := context.WithTimeout(c.ctx, attemptTimeout)
		defer cancel()
		l, err := c.current(ctx, true)
		if err != nil {
			return // a reconnection finds out which channels are gone
		}
		v := c.shapes()
		err = upError(v, l.rpc.Call(ctx, "subscribe", v.Params(&protocol.SubscribeParams{Channel: uri}), nil))
		if !errors.Is(err, ErrNotFound) {
			return
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.channels[uri] == ch {
			c.goneLocked(uri)
		}
	})
}

// goneLocked ends the subscriptions of a channel the host removed.
func (c *Client) goneLocked(uri string) {
	ch := c.channels[uri]
	if ch == nil {
		return
	}
	delete(c.channels, uri)
	for _, s := range ch.subs {
		s.endLocked(ErrChannelGone)
	}
	ch.subs = nil
	if ch.m != nil {
		for _, p := range ch.m.clearPending() {
			if p.receipt != nil {
				p.receipt.resolve(ErrChannelGone)
			}
		}
	}
}

// serveRequest answers a request from the host with the matching
// function of Options.Handlers.
func (c *Client) serveRequest(ctx context.Context, req *jsonrpc.Request) (any, error) {
	m, ok := protocol.LookupMethod(req.Method)
	if !ok || !m.FromServer || m.Notification {
		return nil, fmt.Errorf("%w: %s", jsonrpc.ErrMethodNotFound, req.Method)
	}
	fn, params := c.opts.Handlers.lookup(req.Method)
	if fn == nil {
		return nil, &protocol.Error{Code: protocol.CodeMethodNotFound, Message: fmt.Sprintf("this client does not serve %s", req.Method)}
	}
	if len(req.Params) > 0 {
		if err := protocol.Unmarshal(req.Params, params); err != nil {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", req.Method, err)}
		}
	}
	v := c.shapes()
	return jsonrpc.Async(func(ctx context.Context) (any, error) {
		res, err := fn(ctx, params)
		// An older host knows the older error codes (view.View.Error).
		var pe *protocol.Error
		if errors.As(err, &pe) {
			if down := v.Error(pe); down != pe {
				err = down
			}
		}
		return res, err
	}), nil
}

// shapes returns the view of the negotiated version.
func (c *Client) shapes() *view.View {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.view
}

// isConnErr reports an error caused by the connection ending.
func isConnErr(err error) bool {
	return errors.Is(err, jsonrpc.ErrClosed) || errors.Is(err, ErrDisconnected)
}
