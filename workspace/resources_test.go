package workspace_test

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/hosttest"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
	"github.com/ahp-go/ahp/workspace/files"
)

// startHost serves a host with the echo agent and a workspace over a real
// WebSocket on 127.0.0.1.
func startHost(t testing.TB, ho *host.Options, wo *workspace.Options) *hosttest.Server {
	t.Helper()
	var o host.Options
	if ho != nil {
		o = *ho
	}
	o.Agents = []agent.Backend{echo.New(&echo.Options{WordDelay: -1, SlowDelay: 20 * time.Millisecond})}
	mk := workspace.New(wo)
	var wh host.WorkspaceHost
	o.Workspace = func(h host.WorkspaceHost) (host.Workspace, error) {
		wh = h
		return mk(h)
	}
	h, err := host.New(&o)
	if err != nil {
		t.Fatal(err)
	}
	workspaceHosts.Store(h, wh)
	t.Cleanup(func() { workspaceHosts.Delete(h) })
	return hosttest.Serve(t, h)
}

// workspaceHosts holds the WorkspaceHost each host of startHost gave its
// workspace, by host.
var workspaceHosts sync.Map

// subscribers returns how many connections subscribe to a channel of a
// host made by startHost.
func subscribers(srv *hosttest.Server, uri string) int {
	wh, _ := workspaceHosts.Load(srv.Host)
	return wh.(host.WorkspaceHost).Subscribers(uri)
}

func initialize(t testing.TB, c *hosttest.Client) *protocol.InitializeResult {
	t.Helper()
	var res protocol.InitializeResult
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: c.ID}, &res)
	return &res
}

func createSession(t testing.TB, c *hosttest.Client, id string, dirs ...string) string {
	t.Helper()
	uri := protocol.SessionURI(id)
	var wd []string
	for _, d := range dirs {
		wd = append(wd, files.URIOf(d))
	}
	c.Must("createSession", &protocol.CreateSessionParams{Channel: uri, WorkingDirectories: wd}, nil)
	return uri
}

func rpcCode(t testing.TB, err error) *protocol.Error {
	t.Helper()
	var pe *protocol.Error
	if !errors.As(err, &pe) {
		t.Fatalf("got %v, want a JSON-RPC error", err)
	}
	return pe
}

type readResult struct {
	Data        string                   `json:"data"`
	Encoding    protocol.ContentEncoding `json:"encoding"`
	ContentType string                   `json:"contentType"`
	Meta        map[string]struct {
		Offset int64 `json:"offset"`
		Length int64 `json:"length"`
		Size   int64 `json:"size"`
		EOF    bool  `json:"eof"`
	} `json:"_meta"`
}

func TestFilesOverWebSocket(t *testing.T) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "hello.txt"), []byte("hello"), 0o644))
	srv := startHost(t, &host.Options{DefaultDirectory: files.URIOf(dir)}, nil)
	c := srv.Dial(t, "c1")
	res := initialize(t, c)
	if res.DefaultDirectory == nil || *res.DefaultDirectory != files.URIOf(dir) {
		t.Fatalf("defaultDirectory %v", res.DefaultDirectory)
	}
	// Before any session works in dir, it is out of scope.
	err := c.Call("resourceRead", &protocol.ResourceReadParams{URI: files.URIOf(filepath.Join(dir, "hello.txt"))}, nil)
	if e := rpcCode(t, err); e.Code != protocol.CodePermissionDenied {
		t.Fatalf("read before the session: %v", e)
	}
	createSession(t, c, "s1", dir)

	var rr readResult
	c.Must("resourceRead", &protocol.ResourceReadParams{URI: files.URIOf(filepath.Join(dir, "hello.txt"))}, &rr)
	if rr.Data != "hello" || rr.Encoding != protocol.ContentEncodingUtf8 || !strings.HasPrefix(rr.ContentType, "text/plain") {
		t.Fatalf("read %+v", rr)
	}

	// Binary goes as base64.
	bin := []byte{0, 1, 2, 0xff, 0xfe}
	c.Must("resourceWrite", &protocol.ResourceWriteParams{URI: files.URIOf(filepath.Join(dir, "b.bin")), Data: base64.StdEncoding.EncodeToString(bin), Encoding: protocol.ContentEncodingBase64}, nil)
	c.Must("resourceRead", &protocol.ResourceReadParams{URI: files.URIOf(filepath.Join(dir, "b.bin"))}, &rr)
	if got, _ := base64.StdEncoding.DecodeString(rr.Data); rr.Encoding != protocol.ContentEncodingBase64 || string(got) != string(bin) {
		t.Fatalf("binary read %+v", rr)
	}
	mode := protocol.ResourceWriteModeAppend
	c.Must("resourceWrite", &protocol.ResourceWriteParams{URI: files.URIOf(filepath.Join(dir, "hello.txt")), Data: " world", Encoding: protocol.ContentEncodingUtf8, Mode: &mode}, nil)
	if got, _ := os.ReadFile(filepath.Join(dir, "hello.txt")); string(got) != "hello world" {
		t.Fatalf("append gave %q", got)
	}

	c.Must("resourceMkdir", &protocol.ResourceMkdirParams{URI: files.URIOf(filepath.Join(dir, "sub", "deep"))}, nil)
	var list protocol.ResourceListResult
	c.Must("resourceList", &protocol.ResourceListParams{URI: files.URIOf(dir)}, &list)
	var names []string
	for _, e := range list.Entries {
		names = append(names, e.Name+":"+string(e.Type))
	}
	if strings.Join(names, " ") != "b.bin:file hello.txt:file sub:directory" {
		t.Fatalf("list %v", names)
	}
	var info protocol.ResourceResolveResult
	c.Must("resourceResolve", &protocol.ResourceResolveParams{URI: files.URIOf(filepath.Join(dir, "hello.txt"))}, &info)
	if info.Type != "file" || info.Size == nil || *info.Size != 11 || info.Mtime == nil || info.Etag == nil {
		t.Fatalf("resolve %+v", info)
	}
	if _, err := time.Parse(time.RFC3339, *info.Mtime); err != nil {
		t.Fatalf("mtime %q is not ISO 8601: %v", *info.Mtime, err)
	}
	// ifMatch with a stale etag is a Conflict.
	stale := "0-0-0"
	err = c.Call("resourceWrite", &protocol.ResourceWriteParams{URI: files.URIOf(filepath.Join(dir, "hello.txt")), Data: "x", Encoding: protocol.ContentEncodingUtf8, IfMatch: &stale}, nil)
	if e := rpcCode(t, err); e.Code != protocol.CodeConflict {
		t.Fatalf("stale ifMatch: %v", e)
	}
	c.Must("resourceCopy", &protocol.ResourceCopyParams{Source: files.URIOf(filepath.Join(dir, "hello.txt")), Destination: files.URIOf(filepath.Join(dir, "sub", "copy.txt"))}, nil)
	c.Must("resourceMove", &protocol.ResourceMoveParams{Source: files.URIOf(filepath.Join(dir, "sub", "copy.txt")), Destination: files.URIOf(filepath.Join(dir, "moved.txt"))}, nil)
	yes := true
	c.Must("resourceDelete", &protocol.ResourceDeleteParams{URI: files.URIOf(filepath.Join(dir, "sub")), Recursive: &yes}, nil)
	if got, _ := os.ReadFile(filepath.Join(dir, "moved.txt")); string(got) != "hello world" {
		t.Fatalf("moved file %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("sub still exists")
	}
	err = c.Call("resourceResolve", &protocol.ResourceResolveParams{URI: files.URIOf(filepath.Join(dir, "sub"))}, nil)
	if e := rpcCode(t, err); e.Code != protocol.CodeNotFound {
		t.Fatalf("resolve of a deleted dir: %v", e)
	}
	err = c.Call("resourceMkdir", &protocol.ResourceMkdirParams{URI: files.URIOf(filepath.Join(dir, "moved.txt"))}, nil)
	if e := rpcCode(t, err); e.Code != protocol.CodeAlreadyExists {
		t.Fatalf("mkdir over a file: %v", e)
	}
}

// A second session's directory is in scope only while that session exists,
// and paths that leave a working directory are refused over the wire too.
func TestFilesScopeFollowsSessions(t *testing.T) {
	base := t.TempDir()
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	must(t, os.Mkdir(a, 0o755))
	must(t, os.Mkdir(b, 0o755))
	must(t, os.WriteFile(filepath.Join(b, "b.txt"), []byte("b"), 0o644))
	must(t, os.WriteFile(filepath.Join(base, "secret"), []byte("secret"), 0o644))
	must(t, os.Symlink("../secret", filepath.Join(a, "leak")))
	srv := startHost(t, nil, nil)
	c := srv.Dial(t, "c1")
	initialize(t, c)
	createSession(t, c, "sa", a)
	sb := createSession(t, c, "sb", b)

	read := func(p string) error {
		return c.Call("resourceRead", &protocol.ResourceReadParams{URI: files.URIOf(p)}, nil)
	}
	must(t, read(filepath.Join(b, "b.txt")))
	c.Must("disposeSession", &protocol.DisposeSessionParams{Channel: sb}, nil)
	for name, err := range map[string]error{
		"disposed session's directory": read(filepath.Join(b, "b.txt")),
		"outward symlink":              read(filepath.Join(a, "leak")),
		"parent":                       read(filepath.Join(base, "secret")),
	} {
		if e := rpcCode(t, err); e.Code != protocol.CodePermissionDenied || len(e.Data) > 0 && strings.Contains(string(e.Data), "request") {
			t.Errorf("%s: %v %s", name, e, e.Data)
		}
	}
	for name, uri := range map[string]string{
		"traversal": files.URIOf(a) + "/../secret",
		"NUL":       files.URIOf(a) + "/x%00",
	} {
		err := c.Call("resourceRead", &protocol.ResourceReadParams{URI: uri}, nil)
		if e := rpcCode(t, err); e.Code != protocol.CodeInvalidParams {
			t.Errorf("%s: %v", name, e)
		}
	}
}

// PermissionDenied carries the resourceRequest that would unlock a
// requestable directory; after that request, the access works for this
// connection only.
func TestPermissionDeniedThenRequest(t *testing.T) {
	shared := t.TempDir()
	must(t, os.WriteFile(filepath.Join(shared, "doc.md"), []byte("# doc"), 0o644))
	srv := startHost(t, nil, &workspace.Options{Requestable: []string{shared}})
	c := srv.Dial(t, "c1")
	initialize(t, c)
	doc := files.URIOf(filepath.Join(shared, "doc.md"))
	err := c.Call("resourceRead", &protocol.ResourceReadParams{URI: doc}, nil)
	e := rpcCode(t, err)
	if e.Code != protocol.CodePermissionDenied {
		t.Fatalf("got %v", e)
	}
	var data struct {
		Request *struct {
			Channel string `json:"channel"`
			URI     string `json:"uri"`
			Read    bool   `json:"read"`
			Write   *bool  `json:"write"`
		} `json:"request"`
	}
	must(t, protocol.Unmarshal(e.Data, &data))
	if data.Request == nil || data.Request.URI != doc || !data.Request.Read || data.Request.Write != nil || data.Request.Channel != protocol.RootURI {
		t.Fatalf("denial data %s", e.Data)
	}
	yes := true
	c.Must("resourceRequest", &protocol.ResourceRequestParams{URI: doc, Read: &yes}, nil)
	var rr readResult
	c.Must("resourceRead", &protocol.ResourceReadParams{URI: doc}, &rr)
	if rr.Data != "# doc" {
		t.Fatalf("read %+v", rr)
	}
	// Another connection has no grant.
	other := srv.Dial(t, "c2")
	initialize(t, other)
	if e := rpcCode(t, other.Call("resourceRead", &protocol.ResourceReadParams{URI: doc}, nil)); e.Code != protocol.CodePermissionDenied {
		t.Fatalf("second client: %v", e)
	}
	// Outside everything: refused, with nothing to ask for.
	e = rpcCode(t, c.Call("resourceRequest", &protocol.ResourceRequestParams{URI: "file:///etc/passwd", Read: &yes}, nil))
	if e.Code != protocol.CodePermissionDenied || strings.Contains(string(e.Data), "request") {
		t.Fatalf("request outside: %v %s", e, e.Data)
	}
}

// Large files are read in pages named by the range _meta.
func TestRangedReadOverWebSocket(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i * 7)
	}
	must(t, os.WriteFile(filepath.Join(dir, "big"), data, 0o644))
	srv := startHost(t, nil, &workspace.Options{Roots: []string{dir}, MaxReadBytes: 1 << 20})
	c := srv.Dial(t, "c1")
	initialize(t, c)
	uri := files.URIOf(filepath.Join(dir, "big"))
	if e := rpcCode(t, c.Call("resourceRead", &protocol.ResourceReadParams{URI: uri}, nil)); e.Code != protocol.CodeInvalidParams || !strings.Contains(e.Message, "read limit") {
		t.Fatalf("whole read of a big file: %v", e)
	}
	var got []byte
	for off := int64(0); ; {
		var rr readResult
		p := &protocol.ResourceReadParams{URI: uri, Meta: rangeMeta(off)}
		c.Must("resourceRead", p, &rr)
		page := []byte(rr.Data)
		if rr.Encoding == protocol.ContentEncodingBase64 {
			var err error
			page, err = base64.StdEncoding.DecodeString(rr.Data)
			must(t, err)
		}
		m := rr.Meta[workspace.RangeMetaKey]
		if m.Offset != off || m.Length != int64(len(page)) || m.Size != int64(len(data)) || len(page) > 1<<20 {
			t.Fatalf("page at %d: %+v (%d bytes)", off, m, len(page))
		}
		got = append(got, page...)
		off += int64(len(page))
		if m.EOF {
			break
		}
	}
	if string(got) != string(data) {
		t.Fatal("pages do not rebuild the file")
	}
}

func rangeMeta(off int64) map[string]jsontext.Value {
	return map[string]jsontext.Value{workspace.RangeMetaKey: jsontext.Value(fmt.Sprintf(`{"offset":%d}`, off))}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
