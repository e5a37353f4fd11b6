// Package jsonrpc is a symmetric JSON-RPC 2.0 peer: either end of a [Conn]
// can call methods on the other, send it notifications, and serve what the
// other end sends.
//
// A quick start over an in-memory pipe (a WebSocket works the same way; see
// [AcceptWebSocket] and [DialWebSocket]):
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
// Every outgoing message (calls, notifications, responses, and encoded
// messages given to [Conn.Send]) joins one queue and leaves in the order it
// joined. Joining never blocks: the queue is bounded in messages and in
// bytes, and a peer that lets it overflow is dropped with
// [ErrSendQueueFull], so that one slow reader never holds up the sender and
// never costs more than its bound. A handler that answers with
// [Request.Reply] places its response among the messages it queues itself.
//
// Incoming requests and notifications are handled one at a time, in the
// order they arrived, on a single goroutine per connection: a handler sees
// the effects of every message before it. A handler that must not hold up
// the queue returns an [Async] result and finishes on its own goroutine.
// Responses to this side's calls do not wait in that queue: they go straight
// to the waiting caller, so a handler may call the peer and wait for the
// answer. A [ConnOptions.Preempter] sees messages before that queue, on the
// reader goroutine; together with [Conn.CallWith], whose result is applied
// there too, it lets a client apply what it receives in exact wire order.
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
// Each Conn runs a reader goroutine for its whole life. A writer goroutine
// runs while the outbound queue holds messages, a handler goroutine while
// incoming messages wait, and one goroutine per unfinished [Async] result:
// an idle connection costs one goroutine and no queue memory. A caller whose
// context ends while its call is queued or being written returns at once
// and the message is still sent whole, so cancelling a call never breaks the
// connection. [Conn.Close], [Conn.CloseWith], the peer hanging up, or a
// fatal error ends the connection: the transport is closed (a WebSocket
// with a status and reason when there is one to give), pending calls fail,
// handler contexts are cancelled, and [Conn.Done] is closed once every
// goroutine has returned.
package jsonrpc
