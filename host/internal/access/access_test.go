package access

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCheck: each rule refuses with its reason and status, in the order
// of the contract, and the refusal never carries the token.
func TestCheck(t *testing.T) {
	withToken := &Policy{Token: "s3cret"}
	for _, tc := range []struct {
		name   string
		p      *Policy
		host   string
		remote string
		auth   string
		target string
		origin string
		want   Reason // 0: passes
	}{
		{"loopback address", &Policy{}, "127.0.0.1:7247", "", "", "", "", 0},
		{"localhost", &Policy{}, "localhost:7247", "", "", "", "", 0},
		{"IPv6 loopback", &Policy{}, "[::1]:7247", "", "", "", "", 0},
		{"IPv4-mapped loopback", &Policy{}, "[::ffff:127.0.0.1]:7247", "", "", "", "", 0},
		{"rebound name", &Policy{}, "evil.example:7247", "", "", "", "", HostName},
		{"trailing dot", &Policy{}, "localhost.:7247", "", "", "", "", HostName},
		{"bad port", &Policy{}, "localhost:99999", "", "", "", "", HostName},
		{"empty Host", &Policy{}, "", "", "", "", "", HostName},
		{"allowed name", &Policy{AllowedHosts: []string{"*.lan"}}, "Box.LAN:7247", "", "", "", "", 0},
		{"any host", &Policy{AnyHost: true}, "evil.example:7247", "", "", "", "", 0},
		{"host before token", withToken, "evil.example:7247", "", "", "", "", HostName},
		{"token missing", withToken, "localhost:7247", "", "", "", "", Token},
		{"token wrong", withToken, "localhost:7247", "", "Bearer nope", "", "", Token},
		{"basic scheme", withToken, "localhost:7247", "", "Basic s3cret", "", "", Token},
		{"bearer", withToken, "localhost:7247", "", "Bearer s3cret", "", "", 0},
		{"tkn query", withToken, "localhost:7247", "", "", "/?tkn=s3cret", "", 0},
		{"token query", withToken, "localhost:7247", "", "", "/?token=s3cret", "", 0},
		{"prefix of the token", withToken, "localhost:7247", "", "", "/?token=s3c", "", Token},
		{"one wrong, one right", withToken, "localhost:7247", "", "", "/?token=nope&tkn=s3cret", "", 0},
		{"loopback exempt", &Policy{Token: "s3cret", LoopbackWithoutToken: true}, "localhost:7247", "127.0.0.1:5000", "", "", "", 0},
		{"exemption is for loopback only", &Policy{Token: "s3cret", AnyHost: true, LoopbackWithoutToken: true}, "box.lan:7247", "192.0.2.1:5000", "", "", "", Token},
		{"token before origin", withToken, "localhost:7247", "", "", "", "https://evil.example", Token},
		{"own origin", &Policy{}, "localhost:7247", "", "", "", "http://localhost:7247", 0},
		{"other loopback origin", &Policy{}, "127.0.0.1:7247", "", "", "", "http://localhost:7247", Origin},
		{"foreign origin", &Policy{}, "localhost:7247", "", "", "", "https://evil.example", Origin},
		{"null origin", &Policy{}, "localhost:7247", "", "", "", "null", Origin},
		{"own origin through AnyHost", &Policy{AnyHost: true}, "evil.example:7247", "", "", "", "http://evil.example:7247", Origin},
		{"allowed origin host", &Policy{OriginPatterns: []string{"app.example"}}, "localhost:7247", "", "", "", "https://app.example", 0},
		{"allowed origin scheme", &Policy{OriginPatterns: []string{"https://app.example"}}, "localhost:7247", "", "", "", "http://app.example", Origin},
		{"origin check off", &Policy{InsecureSkipOriginCheck: true}, "localhost:7247", "", "", "", "https://evil.example", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := tc.target
			if target == "" {
				target = "/"
			}
			r := httptest.NewRequest("GET", target, nil)
			r.Host = tc.host
			if tc.remote != "" {
				r.RemoteAddr = tc.remote
			}
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			if tc.origin != "" {
				r.Header.Set("Origin", tc.origin)
			}
			ref := tc.p.Check(r)
			var got Reason
			if ref != nil {
				got = ref.Reason
			}
			if got != tc.want {
				t.Fatalf("refused for %v (%v), want %v", got, ref, tc.want)
			}
			if ref == nil {
				return
			}
			wantStatus := map[Reason]int{HostName: http.StatusForbidden, Token: http.StatusUnauthorized, Origin: http.StatusForbidden}[tc.want]
			if ref.Status != wantStatus || ref.Message == "" || ref.Error() != ref.Message {
				t.Fatalf("refusal %+v", ref)
			}
			if strings.Contains(ref.Message, "s3c") || strings.Contains(ref.Value, "s3c") {
				t.Fatalf("the token reached the refusal: %+v", ref)
			}
		})
	}
}

// TestRefusalClipped: a huge Host header is clipped in the message and
// the log value.
func TestRefusalClipped(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.Host = strings.Repeat("evil.example", 1000)
	ref := (&Policy{}).Check(r)
	if ref == nil || len(ref.Message) > 1000 || len(ref.Value) > 1000 {
		t.Fatalf("refusal not clipped: %d, %d bytes", len(ref.Message), len(ref.Value))
	}
}

// TestRequireToken checks the token guard other endpoints reuse: the same
// places as the WebSocket endpoint (bearer header, tkn and token query
// parameters), 401 with WWW-Authenticate otherwise, and no guard without
// a token.
func TestRequireToken(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("served")) })
	for _, tc := range []struct {
		name, token, target, auth string
		want                      int
	}{
		{"no token configured", "", "/metrics", "", http.StatusOK},
		{"missing", "s3cret", "/metrics", "", http.StatusUnauthorized},
		{"wrong bearer", "s3cret", "/metrics", "Bearer nope", http.StatusUnauthorized},
		{"basic scheme", "s3cret", "/metrics", "Basic s3cret", http.StatusUnauthorized},
		{"bearer", "s3cret", "/metrics", "Bearer s3cret", http.StatusOK},
		{"token query", "s3cret", "/metrics?token=s3cret", "", http.StatusOK},
		{"tkn query", "s3cret", "/metrics?tkn=s3cret", "", http.StatusOK},
		{"one wrong, one right", "s3cret", "/metrics?token=nope&tkn=s3cret", "", http.StatusOK},
		{"prefix of the token", "s3cret", "/metrics?token=s3c", "", http.StatusUnauthorized},
		{"any host name", "s3cret", "/metrics", "Bearer s3cret", http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", tc.target, nil)
			r.Host = "box.lan:7247"
			if tc.auth != "" {
				r.Header.Set("Authorization", tc.auth)
			}
			w := httptest.NewRecorder()
			RequireToken(tc.token, ok).ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d", w.Code, tc.want)
			}
			if tc.want == http.StatusUnauthorized {
				if w.Header().Get("WWW-Authenticate") == "" || strings.Contains(w.Body.String(), "served") {
					t.Fatalf("refusal: %v %q", w.Header(), w.Body)
				}
			}
			if got := TokenValid(r, tc.token); got != (tc.token != "" && tc.want == http.StatusOK) {
				t.Fatalf("TokenValid = %v", got)
			}
		})
	}
}
