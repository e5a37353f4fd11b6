// Package web serves ahpd's browser client: one page and its scripts,
// embedded in the binary, so the client works with no network beyond the
// host itself.
//
// The page is served at "/" on the host's own listener. It connects back
// to the same origin with a WebSocket, so the host's origin check (same
// host, or an allowed origin) accepts it with no extra configuration.
// A token, when the host requires one, travels in the URL fragment of the
// link ahpd prints (never sent to the server as part of page requests)
// and is handed to the WebSocket as the query parameter "token".
package web

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var static embed.FS

// asset is one embedded file, kept ready to serve.
type asset struct {
	body, gzipped []byte
	etag, ctype   string
}

// Handler serves the web client and passes WebSocket upgrade requests, on
// any path, to ws.
type Handler struct {
	ws     http.Handler
	assets map[string]*asset
	index  []byte // index.html, with stylePlaceholder where each response's nonce goes
}

// tokenCheckPath is where the page asks whether the host takes its token:
// a browser is not told why a WebSocket upgrade failed, so without it a
// wrong token would look like a host that cannot be reached.
const tokenCheckPath = "/token-check"

// stylePlaceholder marks, in index.html, where the nonce of the response
// goes. The page hands it to the style elements the terminal emulator
// creates, which a policy of 'self' alone would refuse.
const stylePlaceholder = "{{style-nonce}}"

// New returns a handler serving the embedded client in front of the
// WebSocket endpoint ws.
func New(ws http.Handler) *Handler {
	h := &Handler{ws: ws, assets: map[string]*asset{}}
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has it
	}
	fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, "_test.mjs") {
			return err
		}
		body, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		if p == "index.html" {
			h.index = body
			return nil
		}
		h.assets["/"+p] = newAsset(p, body)
		return nil
	})
	return h
}

func newAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	a := &asset{body: body, etag: `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
	switch path.Ext(name) {
	case ".mjs", ".js":
		a.ctype = "text/javascript; charset=utf-8"
	case ".webmanifest":
		a.ctype = "application/manifest+json"
	default:
		a.ctype = mime.TypeByExtension(path.Ext(name))
		if a.ctype == "" {
			a.ctype = "application/octet-stream"
		}
	}
	if len(body) > 1024 {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		zw.Write(body)
		zw.Close()
		if b.Len() < len(body) {
			a.gzipped = b.Bytes()
		}
	}
	return a
}

// Size returns the number of bytes the page and its scripts take, and the
// number sent when the browser accepts gzip.
func (h *Handler) Size() (raw, gzipped int) {
	raw, gzipped = len(h.index), len(h.index)
	for _, a := range h.assets {
		raw += len(a.body)
		if a.gzipped != nil {
			gzipped += len(a.gzipped)
		} else {
			gzipped += len(a.body)
		}
	}
	return raw, gzipped
}

// contentPolicy allows the page its own scripts, styles and WebSocket and
// nothing else: no inline script, no third-party origin, no framing. Style
// elements are allowed only with the response's nonce, when it has one.
func contentPolicy(nonce string) string {
	style := "'self'"
	if nonce != "" {
		style += " 'nonce-" + nonce + "'"
	}
	return "default-src 'none'; script-src 'self'; style-src " + style + "; img-src 'self' data:; " +
		"connect-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}

func securityHeaders(hd http.Header, nonce string) {
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Content-Security-Policy", contentPolicy(nonce))
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if isUpgrade(r) || r.URL.Path == tokenCheckPath {
		// The token check goes to the WebSocket endpoint as a plain
		// request: it answers 401 when the token is missing or wrong, and
		// refuses the request otherwise (it is no upgrade).
		h.ws.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	name := r.URL.Path
	if name == "/" || name == "/index.html" {
		h.serveIndex(w)
		return
	}
	a, ok := h.assets[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("ETag", a.etag)
	hd.Set("Cache-Control", "no-cache")
	securityHeaders(hd, "")
	hd.Add("Vary", "Accept-Encoding")
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.body
	if a.gzipped != nil && acceptsGzip(r) {
		hd.Set("Content-Encoding", "gzip")
		body = a.gzipped
	}
	w.Write(body)
}

// serveIndex sends the page with a fresh nonce, never cached: a nonce is
// only worth something when it cannot be known before the response.
func (h *Handler) serveIndex(w http.ResponseWriter) {
	nonce := rand.Text()
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	securityHeaders(hd, nonce)
	w.Write(bytes.ReplaceAll(h.index, []byte(stylePlaceholder), []byte(nonce)))
}

// isUpgrade reports whether r asks to switch to the WebSocket protocol.
func isUpgrade(r *http.Request) bool {
	return headerHas(r.Header, "Connection", "upgrade") && headerHas(r.Header, "Upgrade", "websocket")
}

func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

func acceptsGzip(r *http.Request) bool {
	for _, v := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		if t, _, _ := strings.Cut(strings.TrimSpace(v), ";"); strings.EqualFold(t, "gzip") {
			return true
		}
	}
	return false
}
