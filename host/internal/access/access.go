// Package access decides whether an HTTP request may reach the host's
// endpoints: the WebSocket endpoint and the plain HTTP ones served beside
// it (health, metrics). It knows nothing of AHP; the host asks it before
// upgrading a request, and serves or logs what it answers.
//
// Contract: Policy.Check refuses a request, with a typed Refusal, for the
// first of these that fails, in this order:
//
//   - HostName (403): the Host header does not name this host, that is,
//     neither "localhost", nor a loopback address, nor one of
//     AllowedHosts, and AnyHost is off. A web page that rebinds its own
//     name to 127.0.0.1 (DNS rebinding) sends that name in Host, and so
//     cannot reach the host through it.
//   - Token (401, with WWW-Authenticate): a token is set and the request
//     carries it neither as "Authorization: Bearer <token>" nor in the
//     query parameter "tkn" or "token" (browsers cannot set headers on a
//     WebSocket). LoopbackWithoutToken exempts requests from a loopback
//     address. Tokens are compared in constant time and never put in a
//     Refusal.
//   - Origin (403): the request has an Origin header (it comes from a
//     browser) that is neither allowed by OriginPatterns nor the host's
//     own origin reached through a trusted name; InsecureSkipOriginCheck
//     turns this check off. A request without Origin is a non-browser
//     client and passes. A page on another site therefore cannot open a
//     WebSocket to the host with the user's network position.
//
// A nil Refusal means the request passes. A Policy is read-only once in
// use and safe for concurrent use.
package access

import (
	"crypto/sha256"
	"crypto/subtle"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/ahp-go/ahp/internal/logbound"
)

// A Policy says which requests may reach an endpoint.
type Policy struct {
	// Token, when set, must be presented by the request.
	Token string
	// AllowedHosts are path.Match patterns of host names (without port)
	// accepted in the Host header besides loopback ones.
	AllowedHosts []string
	// AnyHost accepts every Host header; the host's own origin is then
	// not trusted by name.
	AnyHost bool
	// OriginPatterns are path.Match patterns of allowed browser origins:
	// "app.example" matches the origin's host, "https://app.example" its
	// scheme and host.
	OriginPatterns []string
	// InsecureSkipOriginCheck accepts every browser origin.
	InsecureSkipOriginCheck bool
	// LoopbackWithoutToken lets requests from a loopback address through
	// without the token (an operator's local metrics scraper); the host
	// name and origin checks still apply.
	LoopbackWithoutToken bool
}

// A Reason is the rule a refused request broke.
type Reason int

const (
	// HostName: the Host header does not name this host.
	HostName Reason = iota + 1
	// Token: the token is missing or wrong.
	Token
	// Origin: the browser origin is not allowed.
	Origin
)

func (r Reason) String() string {
	switch r {
	case HostName:
		return "host name"
	case Token:
		return "token"
	case Origin:
		return "origin"
	}
	return "Reason(" + strconv.Itoa(int(r)) + ")"
}

// A Refusal is why a request may not pass.
type Refusal struct {
	Reason Reason
	// Status is the HTTP status to answer with.
	Status int
	// Message is the answer's body, for the client: it says what to
	// change, quoting (clipped) what the request sent, never the token.
	Message string
	// Value is the offending header value (Host or Origin), clipped for
	// a log line; "" for Token.
	Value string
}

func (r *Refusal) Error() string { return r.Message }

// Write answers the request with the refusal.
func (r *Refusal) Write(w http.ResponseWriter) {
	if r.Reason == Token {
		w.Header().Set("WWW-Authenticate", `Bearer realm="ahpd"`)
	}
	http.Error(w, r.Message, r.Status)
}

// tokenMessage is the answer to a request without the right token.
const tokenMessage = "missing or wrong token (send it as a bearer token, or in the tkn or token query parameter)"

// Check returns why r may not pass, or nil.
func (p *Policy) Check(r *http.Request) *Refusal {
	trusted := p.trustedHost(r.Host)
	if !trusted && !p.AnyHost {
		return &Refusal{
			Reason:  HostName,
			Status:  http.StatusForbidden,
			Message: "this host does not answer to the name " + quoteClipped(r.Host) + " (DNS rebinding protection; see --allow-host)",
			Value:   logbound.Clip(r.Host, logbound.MaxValue),
		}
	}
	if p.Token != "" && !validToken(r, p.Token) && !(p.LoopbackWithoutToken && fromLoopback(r)) {
		return &Refusal{Reason: Token, Status: http.StatusUnauthorized, Message: tokenMessage}
	}
	origin := r.Header.Get("Origin")
	if msg := p.checkOrigin(origin, r.Host, trusted); msg != "" {
		return &Refusal{
			Reason:  Origin,
			Status:  http.StatusForbidden,
			Message: msg,
			Value:   logbound.Clip(origin, logbound.MaxValue),
		}
	}
	return nil
}

// Guard serves next only to the requests p lets pass, answering the
// others with their refusal.
func (p *Policy) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ref := p.Check(r); ref != nil {
			ref.Write(w)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// trustedHost reports whether a Host header value names this host by a
// loopback name or address, or by one of AllowedHosts.
func (p *Policy) trustedHost(hostport string) bool {
	name := hostName(hostport)
	if name == "" {
		return false
	}
	if isLoopbackName(name) {
		return true
	}
	for _, pat := range p.AllowedHosts {
		if ok, _ := path.Match(strings.ToLower(pat), name); ok {
			return true
		}
	}
	return false
}

// checkOrigin applies the browser origin rules: no Origin header
// (non-browser clients), the insecure switch, the host's own origin when
// the request names the host by a trusted name, or an allowed pattern. It
// returns why the origin is refused, or "".
func (p *Policy) checkOrigin(origin, reqHost string, trusted bool) string {
	if origin == "" || p.InsecureSkipOriginCheck {
		return ""
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return "the browser origin " + quoteClipped(origin) + " is not a URL with a host"
	}
	if trusted && strings.EqualFold(u.Host, reqHost) {
		return ""
	}
	for _, pat := range p.OriginPatterns {
		target := u.Host
		if strings.Contains(pat, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(pat), strings.ToLower(target)); ok {
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

// fromLoopback reports whether a request came from a loopback address.
func fromLoopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// TokenValid reports whether a request carries token as a bearer token or
// in the "tkn" or "token" query parameter. An empty token is never valid.
func TokenValid(r *http.Request, token string) bool {
	return token != "" && validToken(r, token)
}

// RequireToken guards next with the token rule alone: a request without
// the token is answered 401. An empty token lets every request through.
func RequireToken(token string, next http.Handler) http.Handler {
	if token == "" {
		return next
	}
	p := &Policy{Token: token, AnyHost: true, InsecureSkipOriginCheck: true}
	return p.Guard(next)
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

// quoteClipped quotes a value a client sent, clipped, for a message.
func quoteClipped(s string) string {
	return strconv.Quote(logbound.Clip(s, logbound.MaxValue))
}
