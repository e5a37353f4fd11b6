package host

import (
	"net"
	"net/http"
	"net/netip"
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
	var o WebSocketOptions
	if opts != nil {
		o = *opts
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		trusted := o.trustedHost(r.Host)
		if !trusted && !o.AnyHost {
			http.Error(w, "this host does not answer to the name "+quoteClipped(r.Host)+" (DNS rebinding protection; see --allow-host)", http.StatusForbidden)
			return
		}
		if o.Token != "" && !validToken(r, o.Token) && !(g.LoopbackWithoutToken && fromLoopback(r)) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ahpd"`)
			http.Error(w, "missing or wrong token (send it as a bearer token)", http.StatusUnauthorized)
			return
		}
		if err := o.checkOrigin(r.Header.Get("Origin"), r.Host, trusted); err != "" {
			http.Error(w, err, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// fromLoopback reports whether a request came from a loopback address.
func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
