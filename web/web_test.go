package web_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/internal/specdir"
	"github.com/ahp-go/ahp/web"
)

// TestReducerFixtures runs the page's reducers (static/js/reducers.js)
// against the protocol's reducer conformance fixtures, with node. Without
// node the test skips, except under CI=true, where it fails.
func TestReducerFixtures(t *testing.T) {
	dir := specdir.ForTest(t, "test-cases", "reducers")
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("node not found; the browser reducers must be checked under CI=true")
		}
		t.Skip("node not found; skipping the browser reducers' fixtures")
	}
	for _, args := range [][]string{
		{filepath.Join("static", "js", "fixtures_test.mjs"), dir},
		// The 1.x rules the 0.8.0 fixtures do not cover.
		{filepath.Join("static", "js", "reducers_v1_test.mjs")},
		// The terminal view's output retention and the changeset view's
		// URI templates.
		{filepath.Join("static", "js", "terminal_test.mjs")},
		{filepath.Join("static", "js", "changes_test.mjs")},
		// Titles, labels and durations.
		{filepath.Join("static", "js", "text_test.mjs")},
		// The composer's completion triggers and attachment ranges.
		{filepath.Join("static", "js", "complete_test.mjs")},
		// What the page keeps for its reload.
		{filepath.Join("static", "js", "client_test.mjs")},
		// The automation reducers and the automations view's texts.
		{filepath.Join("static", "js", "automations_test.mjs")},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		out, err := exec.CommandContext(ctx, node, args...).CombinedOutput()
		cancel()
		last := strings.TrimSpace(string(out))
		if i := strings.LastIndexByte(last, '\n'); i >= 0 {
			last = last[i+1:]
		}
		if err != nil || !strings.HasSuffix(last, " passed, 0 failed") {
			t.Fatalf("%s: %v\n%s", args[0], err, out)
		}
		t.Logf("%s: %s", filepath.Base(args[0]), last)
	}
}

func serve(t *testing.T, ws http.Handler) *httptest.Server {
	srv := httptest.NewServer(web.New(ws))
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, url string, header http.Header) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func TestServesThePage(t *testing.T) {
	srv := serve(t, http.NotFoundHandler())
	cases := []struct {
		path, ctype string
		status      int
	}{
		{"/", "text/html; charset=utf-8", 200},
		{"/app.css", "text/css; charset=utf-8", 200},
		{"/js/app.js", "text/javascript; charset=utf-8", 200},
		{"/js/reducers.js", "text/javascript; charset=utf-8", 200},
		{"/index.html", "text/html; charset=utf-8", 200},
		{"/vendor/markdown-it.mjs", "text/javascript; charset=utf-8", 200},
		{"/vendor/highlight.mjs", "text/javascript; charset=utf-8", 200},
		{"/sw.js", "text/javascript; charset=utf-8", 200},
		{"/manifest.webmanifest", "application/manifest+json", 200},
		{"/icon-192.png", "image/png", 200},
		{"/js/terminal.js", "text/javascript; charset=utf-8", 200},
		{"/js/changes.js", "text/javascript; charset=utf-8", 200},
		{"/vendor/xterm.mjs", "text/javascript; charset=utf-8", 200},
		{"/vendor/xterm-addon-fit.mjs", "text/javascript; charset=utf-8", 200},
		{"/vendor/xterm.css", "text/css; charset=utf-8", 200},
		{"/js/fixtures_test.mjs", "", 404},
		{"/js/reducers_v1_test.mjs", "", 404},
		{"/js/terminal_test.mjs", "", 404},
		{"/js/changes_test.mjs", "", 404},
		{"/js/automations_test.mjs", "", 404},
		{"/js/automations.js", "text/javascript; charset=utf-8", 200},
		{"/js/text_test.mjs", "", 404},
		{"/js/text.js", "text/javascript; charset=utf-8", 200},
		{"/nope", "", 404},
		{"/../web.go", "", 404},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			res := get(t, srv.URL+c.path, nil)
			if res.StatusCode != c.status {
				t.Fatalf("status %d, want %d", res.StatusCode, c.status)
			}
			if c.status != 200 {
				return
			}
			if got := res.Header.Get("Content-Type"); got != c.ctype {
				t.Errorf("Content-Type %q, want %q", got, c.ctype)
			}
			csp := res.Header.Get("Content-Security-Policy")
			for _, want := range []string{"script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
				if !strings.Contains(csp, want) {
					t.Errorf("Content-Security-Policy %q lacks %q", csp, want)
				}
			}
			if res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") != "no-referrer" {
				t.Errorf("headers %v", res.Header)
			}
		})
	}
}

// The page loads nothing from elsewhere: every script, style and module it
// names is one of the embedded files.
func TestPageIsSelfContained(t *testing.T) {
	srv := serve(t, http.NotFoundHandler())
	body, _ := io.ReadAll(get(t, srv.URL+"/", nil).Body)
	for _, bad := range []string{"http://", "https://", "//cdn", "<script>"} {
		if bytes.Contains(body, []byte(bad)) {
			t.Errorf("index.html contains %q", bad)
		}
	}
	for _, f := range []string{"js/app.js", "js/client.js", "js/dom.js", "js/markdown.js", "js/reducers.js", "js/terminal.js", "js/changes.js", "js/automations.js"} {
		src, err := os.ReadFile(filepath.Join("static", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(line, "import ") && !strings.Contains(line, "'./") && !strings.Contains(line, "'../vendor/") {
				t.Errorf("%s imports from outside the page: %s", f, line)
			}
		}
	}
}

// Each response of the page carries a fresh nonce, in its policy (for
// style elements only) and in the page, and is never cached; the other
// files allow no style element at all.
func TestPageStyleNonce(t *testing.T) {
	srv := serve(t, http.NotFoundHandler())
	nonceIn := regexp.MustCompile(`style-src 'self' 'nonce-([A-Za-z0-9+/=_-]{16,})';`)
	seen := map[string]bool{}
	for range 2 {
		res := get(t, srv.URL+"/", nil)
		body, _ := io.ReadAll(res.Body)
		m := nonceIn.FindStringSubmatch(res.Header.Get("Content-Security-Policy"))
		if m == nil {
			t.Fatalf("no style nonce in %q", res.Header.Get("Content-Security-Policy"))
		}
		if !bytes.Contains(body, []byte(`<meta name="ahpd-style-nonce" content="`+m[1]+`">`)) {
			t.Errorf("the page does not carry the nonce %s of its policy", m[1])
		}
		if bytes.Contains(body, []byte("{{")) {
			t.Error("the page still has a placeholder")
		}
		if res.Header.Get("Cache-Control") != "no-store" || res.Header.Get("ETag") != "" {
			t.Errorf("the page may be cached: %v", res.Header)
		}
		if strings.Contains(res.Header.Get("Content-Security-Policy"), "unsafe-inline") {
			t.Errorf("the policy allows inline code: %s", res.Header.Get("Content-Security-Policy"))
		}
		seen[m[1]] = true
	}
	if len(seen) != 2 {
		t.Errorf("two responses had the same nonce: %v", seen)
	}
	if csp := get(t, srv.URL+"/app.css", nil).Header.Get("Content-Security-Policy"); strings.Contains(csp, "nonce-") {
		t.Errorf("a file other than the page has a nonce: %s", csp)
	}
}

func TestGzipAndETag(t *testing.T) {
	srv := serve(t, http.NotFoundHandler())
	res := get(t, srv.URL+"/vendor/markdown-it.mjs", http.Header{"Accept-Encoding": {"gzip"}})
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("Content-Encoding %q, want gzip", res.Header.Get("Content-Encoding"))
	}
	zr, err := gzip.NewReader(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	want, _ := os.ReadFile(filepath.Join("static", "vendor", "markdown-it.mjs"))
	if !bytes.Equal(plain, want) {
		t.Error("the gzipped body differs from the file")
	}
	etag := res.Header.Get("ETag")
	if again := get(t, srv.URL+"/vendor/markdown-it.mjs", http.Header{"If-None-Match": {etag}}); again.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match with the ETag: status %d, want 304", again.StatusCode)
	}
	raw, gz := web.New(nil).Size()
	t.Logf("page and scripts: %d bytes, %d gzipped", raw, gz)
}

func TestRefusesOtherMethods(t *testing.T) {
	srv := serve(t, http.NotFoundHandler())
	res, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: status %d, want 405", res.StatusCode)
	}
}

// WebSocket upgrades, on any path, go to the WebSocket handler.
func TestUpgradesGoToTheHost(t *testing.T) {
	ws := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		c.Write(r.Context(), websocket.MessageText, []byte("hello from "+r.URL.Path))
		c.Close(websocket.StatusNormalClosure, "")
	})
	srv := serve(t, ws)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, path := range []string{"/", "/ahp"} {
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+path, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		_, msg, err := c.Read(ctx)
		if err != nil || string(msg) != "hello from "+path {
			t.Errorf("%s: %q %v", path, msg, err)
		}
		c.CloseNow()
	}
}
