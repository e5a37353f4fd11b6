package host

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/ahp-go/ahp/protocol"
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

// TokenValid reports whether a request carries token where the WebSocket
// endpoint looks for it: "Authorization: Bearer <token>", or the query
// parameter "tkn" or "token". An empty token is never valid: callers that
// run without one skip the check (see RequireToken).
func TokenValid(r *http.Request, token string) bool {
	return token != "" && validToken(r, token)
}

// RequireToken guards an HTTP handler (a metrics or debug endpoint, say)
// with the same token rule as the WebSocket endpoint: a request without
// the token is answered 401, never reaching next. An empty token (a host
// run with --no-token) lets every request through.
func RequireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !validToken(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="ahpd"`)
			http.Error(w, "missing or wrong token (send it as a bearer token or in the token query parameter)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenQueryParams are the query parameters a client may carry the token
// in: "tkn" is VS Code's connection-token parameter.
var tokenQueryParams = [...]string{"tkn", "token"}

// validToken reports whether the request carries the token in its
// Authorization header or in a query parameter. Every candidate is
// compared, in constant time, whatever the earlier ones gave.
func validToken(r *http.Request, token string) bool {
	want := sha256.Sum256([]byte(token))
	ok := 0
	check := func(got string) {
		sum := sha256.Sum256([]byte(got))
		ok |= subtle.ConstantTimeCompare(sum[:], want[:])
	}
	if got, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); found {
		check(got)
	}
	q := r.URL.Query()
	for _, name := range tokenQueryParams {
		for _, got := range q[name] {
			check(got)
		}
	}
	return ok == 1
}

// A DirectoryConfiner is a Workspace that confines working directories:
// when it reports roots, the host creates sessions and chats, moves chats
// and accepts working directory changes only with directories inside
// them (package workspace's, with --root). Its method is called without
// the host's lock: it may read the file system (to resolve symbolic
// links).
type DirectoryConfiner interface {
	// ConfineDirectory returns nil when dir (a file: URI) may be a
	// working directory, else an error saying why, naming the roots.
	ConfineDirectory(dir string) error
	// Confining reports whether directories are confined at all.
	Confining() bool
}

// confiner is the workspace's DirectoryConfiner when it confines, else
// nil.
func (h *Host) confiner() DirectoryConfiner {
	if cf, ok := h.ws.(DirectoryConfiner); ok && cf.Confining() {
		return cf
	}
	return nil
}

// confineDirs answers -32602 for the first of dirs outside the roots
// working directories are confined to. Without the lock.
func (h *Host) confineDirs(method string, dirs []string) error {
	cf := h.confiner()
	if cf == nil {
		return nil
	}
	for _, d := range dirs {
		if err := cf.ConfineDirectory(d); err != nil {
			return rpcError(protocol.CodeInvalidParams, "%s: %v", method, err)
		}
	}
	return nil
}

// actionDirs returns the working directories a client action adds to a
// session or chat.
func actionDirs(a protocol.StateAction) []string {
	switch a := a.(type) {
	case *protocol.SessionWorkingDirectorySetAction:
		return []string{a.Directory}
	case *protocol.SessionWorkingDirectoryReplacedAction:
		return []string{a.Replacement}
	case *protocol.ChatWorkingDirectorySetAction:
		return []string{a.Directory}
	}
	return nil
}

// confineAction rejects, to the client alone, an action that would give
// a session or chat a working directory outside the roots. It reports
// whether it did.
func (h *Host) confineAction(c *conn, p *protocol.DispatchActionParams) bool {
	if p.Action == nil || h.confiner() == nil {
		return false
	}
	err := h.confineDirs(p.Action.Type(), actionDirs(p.Action))
	if err == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !c.gone {
		origin := &protocol.ActionOrigin{ClientID: c.clientID, ClientSeq: p.ClientSeq}
		c.sendLocked(h.privateEnvelope(c.view, p.Channel, p.Action, origin, err.(*protocol.Error).Message))
	}
	return true
}

// moveDirs returns the working directories a chat move gives the chat,
// and the new session when the chat moves to one, for confineDirs. What
// it cannot read is left to the move to report.
func (h *Host) moveDirs(ctx context.Context, p *protocol.MoveChatParams) []string {
	var dirs []string
	h.locked(ctx, func(rd *storeReads) (change, error) {
		dirs = nil
		ch, err := h.channelLocked(rd, p.Channel)
		if err != nil || ch == nil || ch.kind != protocol.ChannelChat || ch.session == nil {
			return nil, err
		}
		dirs = slices.Clone(ch.state.(*protocol.ChatState).WorkingDirectories)
		if _, ok := p.Destination.(*protocol.ChatMoveToNewSessionDestination); ok {
			sch, err := h.channelLocked(rd, ch.session.uri)
			if err != nil || sch == nil {
				return nil, err
			}
			dirs = append(dirs, sch.state.(*protocol.SessionState).WorkingDirectories...)
		}
		return nil, nil
	})
	return dirs
}
