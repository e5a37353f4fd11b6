package host

import (
	"context"
	"net/http"
	"time"

	"github.com/ahp-go/ahp/host/internal/access"
	"github.com/ahp-go/ahp/internal/logbound"
	"github.com/ahp-go/ahp/jsonrpc"
)

// WebSocketOptions configures the WebSocket endpoint.
type WebSocketOptions struct {
	// Token, when set, must be presented by clients on the upgrade
	// request, either as "Authorization: Bearer <token>" or, for browsers
	// (which cannot set headers on a WebSocket), as the query parameter
	// "tkn" (what VS Code's remote agent host connection sends) or
	// "token". It is compared in constant time and never logged.
	Token string
	// AllowedHosts lists the names (host patterns as path.Match, without a
	// port, e.g. "ahp.example.com" or "*.lan") accepted in the request's
	// Host header besides loopback ones ("localhost" and loopback
	// addresses). A request naming another host is refused with 403: a
	// web page that rebinds its own name to 127.0.0.1 (DNS rebinding)
	// sends that name, and so cannot reach the host through it.
	AllowedHosts []string
	// AnyHost accepts every Host header. It is meant for listeners
	// reachable beyond this machine, where the token guards the endpoint;
	// on such a listener AllowedHosts can still narrow the accepted names
	// when AnyHost is off.
	AnyHost bool
	// OriginPatterns lists the browser origins (host patterns, as
	// websocket.AcceptOptions.OriginPatterns: "app.example" or
	// "https://app.example") allowed to connect. Besides them a browser
	// is only accepted from the host's own origin, and only when the
	// request names the host by a loopback or allowed name (not through
	// AnyHost). Requests without an Origin header (non-browser clients)
	// are always allowed.
	OriginPatterns []string
	// InsecureSkipOriginCheck accepts browser upgrades from any origin.
	InsecureSkipOriginCheck bool
	// PingInterval is how often each client is pinged; a client that does
	// not answer within PingTimeout is taken for dead and dropped. Zero
	// means DefaultPingInterval, negative disables pings. Zero PingTimeout
	// means PingInterval.
	PingInterval time.Duration
	PingTimeout  time.Duration
}

// DefaultPingInterval is how often the WebSocket endpoint pings each client
// unless WebSocketOptions says otherwise.
const DefaultPingInterval = 30 * time.Second

// WebSocketHandler returns the HTTP handler that upgrades requests to
// WebSocket connections and serves AHP on them.
func (h *Host) WebSocketHandler(opts *WebSocketOptions) http.Handler {
	var o WebSocketOptions
	if opts != nil {
		o = *opts
	}
	policy := o.policy()
	if o.PingInterval == 0 {
		o.PingInterval = DefaultPingInterval
	}
	wsOpts := &jsonrpc.WebSocketOptions{
		// The origin is checked below, with the rules of package access
		// rather than the library's (which trusts any Host the request
		// names).
		InsecureSkipOriginCheck: true,
		PingInterval:            max(o.PingInterval, 0),
		PingTimeout:             o.PingTimeout,
	}
	// Refusals come one request at a time, from anyone who can reach the
	// port: their log lines are thinned out like a connection's.
	var refusals logbound.Repeats
	logRefusal := func(msg string, args ...any) {
		if ok, held := refusals.Allow(time.Now()); ok {
			h.log.Info(msg, append(args, "heldBack", held)...)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ref := policy.Check(r); ref != nil {
			ref.Write(w)
			switch ref.Reason {
			case access.HostName:
				logRefusal("refused a request naming a host that is not allowed", "remote", r.RemoteAddr, "host", ref.Value)
			case access.Token:
				logRefusal("refused a connection without a valid token", "remote", r.RemoteAddr)
			default:
				logRefusal("refused a browser origin", "remote", r.RemoteAddr, "origin", ref.Value)
			}
			return
		}
		t, err := jsonrpc.AcceptWebSocket(w, r, wsOpts)
		if err != nil {
			logRefusal("refused a WebSocket upgrade", "remote", r.RemoteAddr, "err", clip(err.Error(), maxLoggedValue))
			return
		}
		// The connection outlives this handler, on a goroutine of the
		// host's: once the handler returns, net/http drops the request,
		// its headers and the response's buffer, which the hijacked
		// connection does not use (a few KiB per idle connection). The
		// request's context ends with the handler, so only its values go
		// along.
		ctx := context.WithoutCancel(r.Context())
		if !h.goIfOpen(func() { h.ServeTransport(ctx, t) }) {
			t.Close()
		}
	})
}

// ServeHTTP serves the WebSocket endpoint with no token, loopback host
// names only and the default origin check.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.WebSocketHandler(nil).ServeHTTP(w, r)
}
