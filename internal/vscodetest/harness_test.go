package vscodetest

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/syncbuf"
	"github.com/ahp-go/ahp/workspace"
)

// install runs .ci/install-code-server (a no-op once the pinned versions
// are in .cache/vscode) and returns the Node binary and code-server's
// entry script. When the npm registry cannot be reached the test skips,
// except under CI=true, where it fails.
func install(t *testing.T) (node, entry string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		// The Node that code-server needs comes from the npm registry as
		// a Linux build only; CI runs on Linux.
		t.Skipf("the VS Code test runs on Linux only (this is %s)", runtime.GOOS)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := os.Getenv("AHP_VSCODE_DIR")
	if dir == "" {
		dir = filepath.Join(root, ".cache", "vscode")
	}
	cmd := exec.Command(filepath.Join(root, ".ci", "install-code-server"), dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 3 && os.Getenv("CI") != "true" {
			t.Skipf("the npm registry cannot be reached, so code-server cannot be installed; skipping the VS Code test:\n%s", out)
		}
		t.Fatalf("installing code-server (required under CI=true): %v\n%s", err, out)
	}
	node = filepath.Join(dir, "node", "pinned", "bin", "node")
	entry = filepath.Join(dir, "code-server", "node_modules", "code-server", "out", "node", "entry.js")
	for _, p := range []string{node, entry} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("code-server install incomplete: %v", err)
		}
	}
	return node, entry
}

// newToken returns a random token for the host's WebSocket endpoint.
func newToken(t *testing.T) string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// ahpd is an in-process host with the echo agent, serving its WebSocket
// endpoint with a token on a loopback port chosen by the system. Its logs
// (debug level) go to ahpd.log among the test's artifacts.
type ahpd struct {
	h       *host.Host
	addr    string // host:port
	token   string
	home    string       // HOME of the ahp command lines the test runs
	refused atomic.Int64 // requests refused with 401 or 403
}

func startHost(t *testing.T, token string) *ahpd {
	t.Helper()
	logf, err := os.Create(filepath.Join(t.ArtifactDir(), "ahpd.log"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&host.Options{
		Agents:    []agent.Backend{echo.New(nil)},
		Workspace: workspace.New(nil),
		Logger:    slog.New(slog.NewTextHandler(logf, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &ahpd{h: h, addr: ln.Addr().String(), token: token, home: t.TempDir()}
	ws := h.WebSocketHandler(&host.WebSocketOptions{Token: token})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws.ServeHTTP(&refusals{ResponseWriter: w, a: a}, r)
	})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.Serve(ln)
	}()
	t.Cleanup(func() {
		srv.Close()
		<-done
		h.Close()
		logf.Close()
	})
	return a
}

// refusals counts the host's 401 and 403 answers; it passes the
// connection on for WebSocket upgrades.
type refusals struct {
	http.ResponseWriter
	a *ahpd
}

func (r *refusals) WriteHeader(code int) {
	if code == http.StatusUnauthorized || code == http.StatusForbidden {
		r.a.refused.Add(1)
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *refusals) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(r.ResponseWriter).Hijack()
}

func (r *refusals) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// url is the host's WebSocket URL.
func (a *ahpd) url() string { return "ws://" + a.addr }

// freePort returns a loopback port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// codeServer is a running code-server whose VS Code server reaches the
// host through its agent host bridge.
type codeServer struct {
	url    string // http://127.0.0.1:port
	folder string // the workspace folder VS Code opens
	log    *syncbuf.Buffer
}

// userSettings are VS Code's user settings for the test: no welcome page,
// no tips, no telemetry or update prompts that would cover the UI.
const userSettings = `{
	"workbench.startupEditor": "none",
	"workbench.tips.enabled": false,
	"workbench.enableExperiments": false,
	"telemetry.telemetryLevel": "off",
	"update.mode": "none",
	"extensions.autoUpdate": false,
	"extensions.autoCheckUpdates": false,
	"security.workspace.trust.enabled": false,
	"chat.agentHost.enabled": true
}
`

// startCodeServer starts code-server with its agent host bridge pointed at
// bridgeAddr (host:port), given bridgeToken unless it is empty.
func startCodeServer(t *testing.T, node, entry, bridgeAddr, bridgeToken string) *codeServer {
	t.Helper()
	base := t.TempDir()
	folder := filepath.Join(base, "project")
	userData := filepath.Join(base, "user-data")
	for _, d := range []string{folder, filepath.Join(userData, "User"), filepath.Join(base, "home"), filepath.Join(base, "extensions")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(folder, "README.md"), []byte("# project\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(userData, "User", "settings.json"), []byte(userSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(base, "config.yaml")
	if err := os.WriteFile(config, []byte("auth: none\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, bridgePort, err := net.SplitHostPort(bridgeAddr)
	if err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	args := []string{entry,
		"--config", config,
		"--bind-addr", fmt.Sprintf("127.0.0.1:%d", port),
		"--auth", "none",
		"--disable-telemetry",
		"--disable-update-check",
		"--disable-workspace-trust",
		"--disable-getting-started-override",
		"--user-data-dir", userData,
		"--extensions-dir", filepath.Join(base, "extensions"),
		"--vscode-option", "agent-host-bridge-host=127.0.0.1",
		"--vscode-option", "agent-host-bridge-port=" + bridgePort,
	}
	if bridgeToken != "" {
		args = append(args, "--vscode-option", "agent-host-bridge-connection-token="+bridgeToken)
	}
	args = append(args, folder)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(),
		"HOME="+filepath.Join(base, "home"),
		"XDG_CONFIG_HOME="+filepath.Join(base, "home", ".config"),
		"XDG_DATA_HOME="+filepath.Join(base, "home", ".local", "share"),
		"PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"),
	)
	// code-server forks VS Code's server and extension hosts, which
	// outlive it unless the whole process group is stopped.
	setGroup(cmd)
	cmd.Cancel = func() error { return stopGroup(cmd, false) }
	cmd.WaitDelay = 10 * time.Second
	log := &syncbuf.Buffer{}
	logf, err := os.Create(filepath.Join(t.ArtifactDir(), "code-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	w := io.MultiWriter(log, logf)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting code-server: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		cmd.Wait()
	}()
	t.Cleanup(func() {
		cancel()
		<-exited
		stopGroup(cmd, true) // what is left of the group
		logf.Close()
	})
	cs := &codeServer{url: fmt.Sprintf("http://127.0.0.1:%d", port), folder: folder, log: log}
	// Ready once it answers its health check.
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			t.Fatalf("code-server exited: %s", log.String())
		default:
		}
		resp, err := http.Get(cs.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("code-server did not come up within 60s: %s", log.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// workbenchURL opens the test's folder in VS Code.
func (cs *codeServer) workbenchURL() string {
	return cs.url + "/?folder=" + cs.folder
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// buildAHP builds the ahp command line into a temporary folder.
func buildAHP(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "ahp")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/ahp-go/ahp/cmd/ahp").CombinedOutput()
	if err != nil {
		t.Fatalf("building ahp: %v\n%s", err, out)
	}
	return bin
}

// cli runs the ahp command line against the host with the given token
// ("" for none) and returns its standard output, or the error with its
// standard error.
func (a *ahpd) cli(ctx context.Context, bin, token string, args ...string) (string, error) {
	args = append([]string{"--url", a.url(), "--json"}, args...)
	if token != "" {
		args = append([]string{"--token", token}, args...)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	// A home of its own, so that ahp finds no token but the one given.
	cmd.Env = append(os.Environ(), "AHP_TOKEN=", "AHP_URL=", "HOME="+a.home,
		"XDG_CONFIG_HOME="+a.home, "XDG_DATA_HOME="+a.home, "XDG_STATE_HOME="+a.home, "XDG_RUNTIME_DIR="+a.home)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("ahp %s: %w: %s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}
