// Package churn drives a host through the life of a busy daemon, one cycle
// at a time: a client connects, creates a session, runs a turn, starts and
// cancels another, moves a side chat to a new session, disposes both
// sessions and disconnects. What a cycle leaves live on the heap once
// everything it made is gone is what a daemon running for months gains per
// cycle; the benchmarks and leak tests of the host and the agents measure
// it with LiveHeap.
package churn

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// Options says what a cycle does. The zero value is a cycle that
// connects, initializes, lists the sessions and disconnects.
type Options struct {
	// Provider is the agent sessions are created on; empty means the cycle
	// creates no session.
	Provider string
	// WorkingDirectory, when set, is every session's working directory
	// (a file: URI).
	WorkingDirectory string
	// Turn is the prompt of the turn that runs to its end; Cancel the
	// prompt of the turn that is cancelled once it started (a slow one).
	// Either empty skips its step.
	Turn, Cancel string
	// Move creates a side chat and moves it to a new session, which is
	// disposed as well (agents that host several chats per session).
	Move bool
	// Clients is how many client IDs connections take in turn: a daemon
	// sees the same few clients reconnect. Zero means 4.
	Clients int
	// Timeout bounds each wait of a cycle. Zero means 20 seconds.
	Timeout time.Duration
}

// Driver runs cycles against one host. Cycles run one at a time.
type Driver struct {
	h    *host.Host
	opts Options
	n    int
}

// New returns a driver of h.
func New(h *host.Host, opts Options) *Driver {
	if opts.Clients <= 0 {
		opts.Clients = 4
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 20 * time.Second
	}
	return &Driver{h: h, opts: opts}
}

// Cycle runs one cycle and returns once the client's connection has ended
// on the host's side too.
func (d *Driver) Cycle(ctx context.Context) (err error) {
	d.n++
	ctx, cancel := context.WithTimeout(ctx, d.opts.Timeout)
	defer cancel()

	ours, theirs := jsonrpc.Pipe()
	served := make(chan error, 1)
	go func() { served <- d.h.ServeTransport(ctx, theirs) }()
	c := &client{wake: make(chan struct{}, 1)}
	c.rpc = jsonrpc.NewConn(ours, jsonrpc.HandlerFunc(c.handle), &jsonrpc.ConnOptions{MaxMessageSize: 64 << 20})
	defer func() {
		c.rpc.Close()
		select {
		case <-served:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("churn: the host did not end the connection: %w", ctx.Err()))
		}
	}()

	id := fmt.Sprintf("churn-%d", d.n%d.opts.Clients)
	if err := c.rpc.Call(ctx, "initialize", &protocol.InitializeParams{ProtocolVersions: []string{protocol.ProtocolVersion}, ClientID: id}, nil); err != nil {
		return fmt.Errorf("churn: initialize: %w", err)
	}
	if d.opts.Provider == "" {
		if err := c.rpc.Call(ctx, "listSessions", &protocol.ListSessionsParams{}, nil); err != nil {
			return fmt.Errorf("churn: listSessions: %w", err)
		}
		return nil
	}
	sess := protocol.SessionURI(fmt.Sprintf("churn-%d", d.n))
	p := &protocol.CreateSessionParams{Channel: sess, Provider: &d.opts.Provider}
	if d.opts.WorkingDirectory != "" {
		p.WorkingDirectories = []string{d.opts.WorkingDirectory}
	}
	if err := c.rpc.Call(ctx, "createSession", p, nil); err != nil {
		return fmt.Errorf("churn: createSession: %w", err)
	}
	var sub protocol.SubscribeResult
	if err := c.rpc.Call(ctx, "subscribe", &protocol.SubscribeParams{Channel: sess}, &sub); err != nil {
		return fmt.Errorf("churn: subscribe: %w", err)
	}
	st, ok := sub.Snapshot.State.(*protocol.SessionState)
	if !ok || st.DefaultChat == nil {
		return fmt.Errorf("churn: subscribe answered no session state with a default chat")
	}
	if st.Lifecycle == protocol.SessionLifecycleCreating {
		if err := c.wait(ctx, sess, "session/ready"); err != nil {
			return err
		}
	}
	chat := *st.DefaultChat
	if err := c.rpc.Call(ctx, "subscribe", &protocol.SubscribeParams{Channel: chat}, nil); err != nil {
		return fmt.Errorf("churn: subscribe to the chat: %w", err)
	}

	if d.opts.Turn != "" {
		c.dispatch(ctx, chat, &protocol.ChatTurnStartedAction{TurnID: fmt.Sprintf("t%d", d.n), StartedAt: protocol.FormatTime(time.Now()), Message: userMessage(d.opts.Turn)})
		if err := c.wait(ctx, chat, "chat/turnComplete"); err != nil {
			return err
		}
	}
	if d.opts.Cancel != "" {
		turn := fmt.Sprintf("c%d", d.n)
		c.dispatch(ctx, chat, &protocol.ChatTurnStartedAction{TurnID: turn, StartedAt: protocol.FormatTime(time.Now()), Message: userMessage(d.opts.Cancel)})
		c.dispatch(ctx, chat, &protocol.ChatTurnCancelledAction{TurnID: turn})
		if err := c.wait(ctx, chat, "chat/turnCancelled"); err != nil {
			return err
		}
	}
	if d.opts.Move {
		side := protocol.ChatURI(fmt.Sprintf("churn-side-%d", d.n))
		if err := c.rpc.Call(ctx, "createChat", &protocol.CreateChatParams{Channel: sess, Chat: side}, nil); err != nil {
			return fmt.Errorf("churn: createChat: %w", err)
		}
		var moved protocol.MoveChatResult
		if err := c.rpc.Call(ctx, "moveChat", &protocol.MoveChatParams{Channel: side, Destination: &protocol.ChatMoveToNewSessionDestination{}}, &moved); err != nil {
			return fmt.Errorf("churn: moveChat: %w", err)
		}
		if err := c.rpc.Call(ctx, "disposeSession", &protocol.DisposeSessionParams{Channel: moved.Session}, nil); err != nil {
			return fmt.Errorf("churn: disposeSession of the moved chat's session: %w", err)
		}
	}
	if err := c.rpc.Call(ctx, "disposeSession", &protocol.DisposeSessionParams{Channel: sess}, nil); err != nil {
		return fmt.Errorf("churn: disposeSession: %w", err)
	}
	if c.failed != nil {
		return c.failed
	}
	return nil
}

// LiveHeap returns the bytes live on the heap once collected.
func LiveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC() // finalizers queued by the first run
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func userMessage(text string) protocol.Message {
	return protocol.Message{Text: text, Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}}
}

// client is one cycle's connection. It keeps the type of every action it
// was sent, by channel, until a wait consumes it.
type client struct {
	rpc  *jsonrpc.Conn
	seq  int64
	wake chan struct{}

	mu     sync.Mutex
	seen   []seen
	failed error
}

type seen struct{ channel, typ string }

func (c *client) handle(_ context.Context, req *jsonrpc.Request) (any, error) {
	if req.Method != "action" {
		return nil, nil
	}
	var env protocol.ActionEnvelope
	if err := protocol.Unmarshal(req.Params, &env); err != nil {
		return nil, nil
	}
	c.mu.Lock()
	c.seen = append(c.seen, seen{env.Channel, env.Action.Type()})
	if env.RejectionReason != nil && c.failed == nil {
		c.failed = fmt.Errorf("churn: %s on %s was rejected: %s", env.Action.Type(), env.Channel, *env.RejectionReason)
	}
	if a, ok := env.Action.(*protocol.SessionCreationFailedAction); ok && c.failed == nil {
		c.failed = fmt.Errorf("churn: %s failed to start: %s", env.Channel, a.Error.Message)
	}
	if _, ok := env.Action.(*protocol.ChatErrorAction); ok && c.failed == nil {
		c.failed = fmt.Errorf("churn: a turn on %s failed", env.Channel)
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil, nil
}

func (c *client) dispatch(ctx context.Context, channel string, a protocol.StateAction) {
	c.seq++
	if err := c.rpc.Notify(ctx, "dispatchAction", &protocol.DispatchActionParams{Channel: channel, ClientSeq: c.seq, Action: a}); err != nil {
		c.mu.Lock()
		c.failed = cmpErr(c.failed, fmt.Errorf("churn: dispatchAction: %w", err))
		c.mu.Unlock()
	}
}

func cmpErr(old, new error) error {
	if old != nil {
		return old
	}
	return new
}

// wait waits until an action of the type arrives on the channel, and
// forgets every action seen up to it.
func (c *client) wait(ctx context.Context, channel, typ string) error {
	for {
		c.mu.Lock()
		failed := c.failed
		for i, s := range c.seen {
			if s.channel == channel && s.typ == typ {
				c.seen = c.seen[i+1:]
				c.mu.Unlock()
				return nil
			}
		}
		c.mu.Unlock()
		if failed != nil {
			return failed
		}
		select {
		case <-c.wake:
		case <-ctx.Done():
			return fmt.Errorf("churn: waiting for %s on %s: %w", typ, channel, ctx.Err())
		}
	}
}
