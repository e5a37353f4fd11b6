package host

import (
	"net"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"
)

// trustedHost reports whether a request's Host header names this host by
// a loopback name or address, or by one of AllowedHosts.
func (o *WebSocketOptions) trustedHost(hostport string) bool {
	name := hostName(hostport)
	if name == "" {
		return false
	}
	if isLoopbackName(name) {
		return true
	}
	for _, p := range o.AllowedHosts {
		if ok, _ := path.Match(strings.ToLower(p), name); ok {
			return true
		}
	}
	return false
}

// checkOrigin applies the browser origin rules: no Origin header
// (non-browser clients), the insecure switch, the host's own origin when
// the request names the host by a trusted name, or an allowed pattern. It
// returns why the origin is refused, or "".
func (o *WebSocketOptions) checkOrigin(origin, reqHost string, trusted bool) string {
	if origin == "" || o.InsecureSkipOriginCheck {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return "the browser origin " + quoteClipped(origin) + " is not a URL with a host"
	}
	if trusted && strings.EqualFold(u.Host, reqHost) {
		return ""
	}
	for _, p := range o.OriginPatterns {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return ""
		}
	}
	return "the browser origin " + quoteClipped(origin) + " is not allowed (see --allow-origin)"
}

// hostName returns the lower-case name or address of a Host header value,
// without port or brackets; "" when it is malformed.
func hostName(hostport string) string {
	name := hostport
	if h, port, err := net.SplitHostPort(hostport); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return ""
		}
		name = h
	} else if strings.ContainsAny(hostport, "[]") {
		name = strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]")
	}
	return strings.ToLower(name)
}

// isLoopbackName reports whether a host name can only designate this
// machine: "localhost" or a loopback address.
func isLoopbackName(name string) bool {
	if name == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(name)
	return err == nil && addr.Unmap().IsLoopback()
}
