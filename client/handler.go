package client

import "context"

// A Handler answers the requests a host sends to the client: the resource*
// family (resourceRead, resourceWrite, resourceList, resourceCopy,
// resourceDelete, resourceMove, resourceResolve, resourceMkdir,
// resourceRequest) and createResourceWatch, with which a host reaches
// files and URIs the client publishes.
//
// HandleRequest is called on a goroutine of its own for each request, so
// requests may be served concurrently; ctx ends when the connection does.
// params points to the method's params type (*protocol.ResourceReadParams
// for resourceRead, and so on), and the result should be the matching
// result type. To answer with a particular error code, return a
// *protocol.Error, such as &protocol.Error{Code:
// protocol.CodeNotFound, Message: "no such file"}; any other
// error is sent as an internal error.
type Handler interface {
	HandleRequest(ctx context.Context, method string, params any) (result any, err error)
}

// HandlerFunc adapts a function to the Handler interface.
type HandlerFunc func(ctx context.Context, method string, params any) (any, error)

// HandleRequest calls f(ctx, method, params).
func (f HandlerFunc) HandleRequest(ctx context.Context, method string, params any) (any, error) {
	return f(ctx, method, params)
}
