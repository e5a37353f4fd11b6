package client

import (
	"context"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/jsonrpc"
)

// link is one connection to the host: the JSON-RPC peer over a transport.
//
// The mirror needs the host's order exactly, so what installs state runs
// on the peer's reader goroutine, in wire order: notifications go to a
// preempter that applies them as they are read, and the answers to
// "ordered" calls (initialize, subscribe, reconnect), whose results install
// state, are applied there too (jsonrpc.Conn.CallWith). Requests from the
// host go to the handler queue.
type link struct {
	c   *Client
	rpc *jsonrpc.Conn

	abandoned bool // guarded by c.mu: a reconnection attempt gave up on it
}

func newLink(c *Client, t jsonrpc.Transport) *link {
	l := &link{c: c}
	l.rpc = jsonrpc.NewConn(t, jsonrpc.HandlerFunc(c.serveRequest), &jsonrpc.ConnOptions{
		MaxMessageSize: c.opts.MaxMessageBytes,
		Preempter:      jsonrpc.HandlerFunc(c.preempt),
		Logger:         c.log,
	})
	return l
}

// preempt handles notifications from the host on the reader goroutine;
// requests go on to serveRequest.
func (c *Client) preempt(_ context.Context, req *jsonrpc.Request) (any, error) {
	if !req.IsNotification() {
		return nil, jsonrpc.ErrNotHandled
	}
	c.handleNotification(req.Method, req.Params)
	return nil, nil
}

// orderedCall sends a request whose result install applies on the reader
// goroutine before any later message is handled. If ctx ends first, the
// call returns ctx.Err() but install still runs when the answer arrives.
func (l *link) orderedCall(ctx context.Context, method string, params any, install func(jsontext.Value) error) error {
	done := make(chan error, 1)
	v := l.c.shapes()
	err := l.rpc.CallWith(method, v.Params(params), func(result jsontext.Value, err error) {
		if err != nil {
			done <- wrapCallError(method, upError(v, err))
			return
		}
		done <- install(result)
	})
	if err != nil {
		return wrapCallError(method, err)
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
