package jsonrpc

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
)

// A Handler serves the requests and notifications that arrive on a [Conn].
//
// Handle is called on the connection's handler goroutine, one message at a
// time, in arrival order. For a request, the result is encoded as the
// response's result, or err becomes its error (see the package
// documentation for how errors map to codes). For a notification, both are
// discarded; errors are logged.
//
// To respond later without holding up the queue, return an [Async] as the
// result. ctx is cancelled when the connection ends.
type Handler interface {
	Handle(ctx context.Context, req *Request) (result any, err error)
}

// HandlerFunc adapts a function to the [Handler] interface.
type HandlerFunc func(ctx context.Context, req *Request) (result any, err error)

// Handle calls f(ctx, req).
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// Async, returned as a handler's result with a nil error, finishes the
// request on a goroutine of its own so that the connection moves on to the
// next queued message at once. The function's return values are then used
// as the handler's would have been. ctx is cancelled when the connection
// ends, and the connection's Done channel waits for the function to return.
//
// Messages after the one being finished this way may be handled, and
// answered, before it.
type Async func(ctx context.Context) (result any, err error)

// Encoded is a result the handler has already encoded as JSON, returned as
// a pointer (*Encoded). It is sent as it is, neither checked nor
// reformatted, so that a large result built from encodings the handler
// keeps costs no second pass; the handler answers for it being valid JSON.
type Encoded []byte

// EncodedWithRoom is an [Encoded] result written into Buf after Room free
// bytes, with a byte of capacity to spare after it, returned as a pointer
// (*EncodedWithRoom). The response is built around the result in Buf
// itself, so a large result (a page of a file) is never copied: the
// handler's buffer is what goes to the peer. [ResponseRoom] is room enough
// for any numeric request ID; with less room than the response needs (a
// long string ID), the result is copied as an Encoded one is. Buf must
// not be used once returned.
type EncodedWithRoom struct {
	Buf  []byte
	Room int
}

// ResponseRoom is the room an [EncodedWithRoom] needs for the head of a
// response to a request with a numeric ID.
const ResponseRoom = 64

// A Request is an incoming request or notification as a [Handler] sees it.
type Request struct {
	ID     protocol.ID    // zero for a notification
	Method string         // the method name
	Params jsontext.Value // the encoded params, nil when absent

	conn    *Conn
	replied atomic.Bool
}

// Reply queues the answer to the request now, from within the handler,
// instead of when the handler returns; the handler's own return values are
// then ignored. It lets a handler order its response among other messages
// it queues on the same connection (a host answering subscribe before any
// action that follows the snapshot, say). Replying to a notification does
// nothing; replying twice sends only the first answer. A response that
// cannot be queued because the connection ended is dropped, as the
// handler's return values would be.
func (req *Request) Reply(result any, err error) {
	if req.IsNotification() || req.conn == nil {
		return
	}
	req.conn.finish(req, result, err)
}

// IsNotification reports whether req expects no response.
func (req *Request) IsNotification() bool { return !req.ID.IsValid() }

// Conn returns the connection req arrived on, from which a handler can call
// or notify the peer.
func (req *Request) Conn() *Conn { return req.conn }

// UnmarshalParams decodes the params into v. Absent params leave v
// unchanged. A failure is returned as an invalid-params error, ready to be
// returned by the handler.
func (req *Request) UnmarshalParams(v any) error {
	if len(req.Params) == 0 {
		return nil
	}
	if err := json.Unmarshal(req.Params, v); err != nil {
		return &protocol.Error{
			Code:    protocol.CodeInvalidParams,
			Message: fmt.Sprintf("invalid params for %s: %v", req.Method, err),
		}
	}
	return nil
}

// Errors a handler can return, possibly wrapped, to answer with the matching
// code. Because [protocol.Error] values match on code under [errors.Is],
// they also test errors received from the peer.
var (
	ErrMethodNotFound = &protocol.Error{Code: protocol.CodeMethodNotFound, Message: "method not found"}
	ErrInvalidParams  = &protocol.Error{Code: protocol.CodeInvalidParams, Message: "invalid params"}
)

// notFound is the handler of a Conn created without one.
func notFound(_ context.Context, req *Request) (any, error) {
	return nil, fmt.Errorf("%w: %s", ErrMethodNotFound, req.Method)
}
