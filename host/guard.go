package host

import (
	"net/http"

	"github.com/ahp-go/ahp/host/internal/access"
)

// GuardOptions relaxes Guard for one endpoint.
type GuardOptions struct {
	// LoopbackWithoutToken lets requests from a loopback address through
	// without the token (an operator's local metrics scraper). The host
	// name and origin checks still apply.
	LoopbackWithoutToken bool
}

// Guard serves next behind the checks of the WebSocket endpoint that
// opts describes: the Host header must name this host (DNS rebinding),
// the token must be presented when one is set, and a browser origin must
// be allowed. It is for the plain HTTP endpoints served beside the
// WebSocket one (health, metrics), so that they follow the same rules.
func Guard(opts *WebSocketOptions, g GuardOptions, next http.Handler) http.Handler {
	p := opts.policy()
	p.LoopbackWithoutToken = g.LoopbackWithoutToken
	return p.Guard(next)
}

// TokenValid reports whether a request carries token where the WebSocket
// endpoint looks for it: "Authorization: Bearer <token>", or the query
// parameter "tkn" or "token". An empty token is never valid: callers that
// run without one skip the check (see RequireToken).
func TokenValid(r *http.Request, token string) bool {
	return access.TokenValid(r, token)
}

// RequireToken guards an HTTP handler (a metrics or debug endpoint, say)
// with the same token rule as the WebSocket endpoint: a request without
// the token is answered 401, never reaching next. An empty token (a host
// run with --no-token) lets every request through.
func RequireToken(token string, next http.Handler) http.Handler {
	return access.RequireToken(token, next)
}

// policy is the access policy opts describes (nil: the defaults).
func (o *WebSocketOptions) policy() *access.Policy {
	if o == nil {
		return &access.Policy{}
	}
	return &access.Policy{
		Token:                   o.Token,
		AllowedHosts:            o.AllowedHosts,
		AnyHost:                 o.AnyHost,
		OriginPatterns:          o.OriginPatterns,
		InsecureSkipOriginCheck: o.InsecureSkipOriginCheck,
	}
}
