package client

import (
	"context"
	"fmt"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// link is one connection to the host: a transport and the JSON-RPC peer
// over it.
//
// The JSON-RPC peer hands responses to their callers as soon as they are
// read, while notifications wait their turn on the handler goroutine, so
// a caller could see the answer to subscribe before the action envelopes
// the host sent ahead of it. The mirror needs the host's order exactly. So
// the link sits between the transport and the peer: as the reader pulls
// each message it handles notifications itself, on the spot, and answers
// to "ordered" calls (initialize, subscribe, reconnect), whose results
// install state; everything else (responses to other calls, requests from
// the host) goes on to the peer.
type link struct {
	c   *Client
	t   jsonrpc.Transport
	rpc *jsonrpc.Conn

	mu    sync.Mutex
	calls map[protocol.ID]*orderedCall // ordered calls awaiting their answer
	dead  bool

	abandoned bool // guarded by c.mu: a reconnection attempt gave up on it
}

// orderedCall is a call whose result is applied on the reader goroutine,
// in arrival order with the notifications around it.
type orderedCall struct {
	method  string
	install func(result jsontext.Value) error
	done    chan error // buffered; receives the outcome once
}

func newLink(c *Client, t jsonrpc.Transport) *link {
	l := &link{c: c, t: t, calls: map[protocol.ID]*orderedCall{}}
	l.rpc = jsonrpc.NewConn(l, jsonrpc.HandlerFunc(c.serveRequest), &jsonrpc.ConnOptions{
		MaxMessageSize: c.opts.MaxMessageBytes,
		Logger:         c.log,
	})
	return l
}

// Read returns the next message the JSON-RPC peer must see, after handling
// the ones the client takes care of itself. It runs on the peer's reader
// goroutine only.
func (l *link) Read(ctx context.Context) ([]byte, error) {
	for {
		data, err := l.t.Read(ctx)
		if err != nil {
			return nil, err
		}
		msg, decoded, err := protocol.DecodeMessageWith(data, actionParams)
		if err != nil {
			return data, nil // the peer reports it
		}
		switch {
		case msg.Notification != nil:
			l.c.handleNotification(msg.Notification, decoded)
			continue
		case msg.Response != nil:
			if oc := l.take(msg.Response.ID); oc != nil {
				oc.finish(msg.Response)
				continue
			}
		}
		return data, nil
	}
}

func (l *link) Write(ctx context.Context, data []byte) error { return l.t.Write(ctx, data) }

// actionParams has "action" notifications, the bulk of the traffic,
// decoded in the same pass as the message.
func actionParams(method string) any {
	if method == "action" {
		return new(protocol.ActionEnvelope)
	}
	return nil
}

func (l *link) Close() error {
	l.mu.Lock()
	l.dead = true
	calls := l.calls
	l.calls = map[protocol.ID]*orderedCall{}
	l.mu.Unlock()
	for _, oc := range calls {
		oc.done <- fmt.Errorf("ahp: %s: %w", oc.method, ErrDisconnected)
	}
	return l.t.Close()
}

// SetReadLimit passes the peer's message size limit on to the transport.
func (l *link) SetReadLimit(n int64) {
	if rl, ok := l.t.(interface{ SetReadLimit(int64) }); ok {
		rl.SetReadLimit(n)
	}
}

func (l *link) take(id protocol.ID) *orderedCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	oc := l.calls[id]
	delete(l.calls, id)
	return oc
}

func (oc *orderedCall) finish(resp *protocol.Response) {
	if resp.Error != nil {
		oc.done <- wrapCallError(oc.method, resp.Error)
		return
	}
	oc.done <- oc.install(resp.Result)
}

// orderedCall sends a request whose result install applies on the reader
// goroutine before any later message is handled. If ctx ends first, the
// call returns ctx.Err() but install still runs when the answer arrives.
func (l *link) orderedCall(ctx context.Context, method string, params any, install func(jsontext.Value) error) error {
	p, err := protocol.Marshal(params)
	if err != nil {
		return fmt.Errorf("ahp: %s: encoding params: %w", method, err)
	}
	id := protocol.StringID(fmt.Sprintf("ahp-go-%d", l.c.callSeq.Add(1)))
	data, err := protocol.Request{ID: id, Method: method, Params: p}.MarshalJSON()
	if err != nil {
		return fmt.Errorf("ahp: %s: %w", method, err)
	}
	oc := &orderedCall{method: method, install: install, done: make(chan error, 1)}
	l.mu.Lock()
	if l.dead {
		l.mu.Unlock()
		return fmt.Errorf("ahp: %s: %w", method, ErrDisconnected)
	}
	l.calls[id] = oc
	l.mu.Unlock()
	if err := l.rpc.WriteRaw(ctx, data); err != nil {
		l.take(id)
		if err == ctx.Err() {
			return err
		}
		return wrapCallError(method, err)
	}
	select {
	case err := <-oc.done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
