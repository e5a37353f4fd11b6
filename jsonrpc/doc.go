// Package jsonrpc is a symmetric JSON-RPC 2.0 peer: either end of a [Conn]
// can call methods on the other, send it notifications, and serve what the
// other end sends.
//
// A quick start over an in-memory pipe (a WebSocket works the same way; see
// [NewWebSocketTransport]):
//
//	a, b := jsonrpc.Pipe()
//	server := jsonrpc.NewConn(a, jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
//		if req.Method != "greet" {
//			return nil, jsonrpc.ErrMethodNotFound
//		}
//		var p struct {
//			Name string `json:"name"`
//		}
//		if err := req.UnmarshalParams(&p); err != nil {
//			return nil, err
//		}
//		return "hello, " + p.Name, nil
//	}), nil)
//	defer server.Close()
//	client := jsonrpc.NewConn(b, nil, nil)
//	defer client.Close()
//	var greeting string
//	err := client.Call(ctx, "greet", map[string]string{"name": "ahp"}, &greeting)
//
// # Messages and transports
//
// A [Transport] moves whole messages; framing stays in the transport, and
// the envelope types live in package protocol. Incoming messages larger than
// [ConnOptions.MaxMessageSize] end the connection; transports that can refuse
// them before buffering (the WebSocket one) do so.
//
// # Ordering
//
// Incoming requests and notifications are handled one at a time, in the
// order they arrived, on a single goroutine per connection: a handler sees
// the effects of every message before it. A handler that must not hold up
// the queue returns an [Async] result and finishes on its own goroutine.
// Responses to this side's calls do not wait in that queue: they go straight
// to the waiting caller, so a handler may call the peer and wait for the
// answer.
//
// # Errors
//
// Errors that cross the wire are [*protocol.Error] values carrying a JSON-RPC
// code. A handler's error keeps its code and data when it is, or wraps, a
// *protocol.Error; any other error reaches the peer as an internal error
// with the error's text. Malformed input is answered with a parse error or
// an invalid-request error, and the connection stays usable.
//
// # Goroutines and shutdown
//
// Each Conn runs a reader goroutine, a writer goroutine, a handler
// goroutine, and one goroutine per unfinished [Async] result. The writer
// sends messages one at a time; a caller whose context ends while its
// message is being written returns at once and the message is still sent
// whole, so cancelling a call never breaks the connection. [Conn.Close], the peer hanging up, or a
// fatal error ends the connection: the transport is closed, pending calls
// fail, handler contexts are cancelled, and [Conn.Done] is closed once every
// goroutine has returned.
package jsonrpc
