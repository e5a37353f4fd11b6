package host

import (
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/jsonrpc"
)

// WebSocketOptions configures the WebSocket endpoint.
type WebSocketOptions struct {
	// Token, when set, must be presented by clients as
	// "Authorization: Bearer <token>" on the upgrade request.
	Token string
	// OriginPatterns lists the browser origins (host patterns, as
	// websocket.AcceptOptions.OriginPatterns) allowed to connect besides
	// the host's own. Requests without an Origin header (non-browser
	// clients) are always allowed.
	OriginPatterns []string
	// InsecureSkipOriginCheck accepts browser upgrades from any origin.
	InsecureSkipOriginCheck bool
}

// WebSocketHandler returns the HTTP handler that upgrades requests to
// WebSocket connections and serves AHP on them.
func (h *Host) WebSocketHandler(opts *WebSocketOptions) http.Handler {
	var o WebSocketOptions
	if opts != nil {
		o = *opts
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o.Token != "" && !validBearer(r.Header.Get("Authorization"), o.Token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ahpd"`)
			http.Error(w, "missing or wrong bearer token", http.StatusUnauthorized)
			h.log.Info("refused a connection without a valid token", "remote", r.RemoteAddr)
			return
		}
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
			OriginPatterns:     o.OriginPatterns,
			InsecureSkipVerify: o.InsecureSkipOriginCheck,
		})
		if err != nil {
			h.log.Info("refused a WebSocket upgrade", "remote", r.RemoteAddr, "err", err)
			return
		}
		t := &wsTransport{jsonrpc.NewWebSocketTransport(ws)}
		h.ServeTransport(r.Context(), t)
	})
}

// ServeHTTP serves the WebSocket endpoint with no token and the default
// origin check.
func (h *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.WebSocketHandler(nil).ServeHTTP(w, r)
}

// validBearer compares an Authorization header with the token in constant
// time.
func validBearer(header, token string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(token)) == 1
}

// wsTransport adds a closing reason to the WebSocket transport.
type wsTransport struct {
	*jsonrpc.WebSocketTransport
}

func (t *wsTransport) CloseWithReason(policy bool, reason string) error {
	code := websocket.StatusNormalClosure
	if policy {
		code = websocket.StatusPolicyViolation
	}
	if len(reason) > 120 {
		reason = reason[:120]
	}
	return t.CloseWithStatus(code, reason)
}
