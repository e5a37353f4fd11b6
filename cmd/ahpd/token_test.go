package main

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/ahp-go/ahp/internal/datadir"
)

// startRun runs ahpd's run function with args on a free loopback port and
// returns its first line (the ws URL with the token) and a func that stops
// it and waits for it.
func startRun(t *testing.T, args ...string) (line string, stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"--listen", "127.0.0.1:0", "--log-level", "error", "--store", "memory"}, args...), pw, io.Discard)
		pw.Close()
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ahpd: %v", err)
			}
		case <-time.After(15 * time.Second):
			t.Error("ahpd did not stop")
		}
	}
	t.Cleanup(stop)
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, pr)
	return strings.TrimPrefix(strings.TrimSpace(line), "ahpd listening on "), stop
}

// dialStatus dials url and returns the HTTP status of the answer.
func dialStatus(t *testing.T, url string, header http.Header) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: header, HTTPClient: &http.Client{Transport: &http.Transport{}}})
	if err == nil {
		ws.CloseNow()
		return http.StatusSwitchingProtocols
	}
	if resp == nil {
		t.Fatalf("dial %s: %v", url, err)
	}
	return resp.StatusCode
}

// buildAhp builds the ahp command into a temporary directory.
func buildAhp(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build ahp with")
	}
	bin := filepath.Join(t.TempDir(), "ahp")
	args := []string{"build", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	if out, err := exec.Command(goTool, append(args, "../ahp")...).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runAhp runs the ahp binary with a data home and no AHP_URL or
// AHP_TOKEN, and returns its output and exit code.
func runAhp(t *testing.T, bin, dataHome string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AHP_") && !strings.HasPrefix(kv, "XDG_DATA_HOME=") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "XDG_DATA_HOME="+dataHome)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return out.String(), errOut.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), 0
}

// TestTokenByDefault: a fresh ahpd (no token configured, an empty data
// directory) makes a token, keeps it private, and refuses a WebSocket
// without it with 401, while ahp run by the same user (same data home)
// connects without flags. Another data home (another user's) gets 401
// from ahp too. A second start keeps the same token; at stop the runtime
// file goes.
func TestTokenByDefault(t *testing.T) {
	t.Setenv("AHPD_TOKEN", "")
	home := t.TempDir()
	t.Setenv("XDG_DATA_HOME", home)
	dir := filepath.Join(home, "ahpd")
	ahp := buildAhp(t)

	printed, stop := startRun(t)
	base, token, ok := strings.Cut(printed, "/?token=")
	if !ok || len(token) < 32 || !strings.HasPrefix(base, "ws://127.0.0.1:") {
		t.Fatalf("ahpd printed %q, want its URL with a token", printed)
	}
	url := base + "/"
	fi, err := os.Stat(filepath.Join(dir, datadir.TokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file: %v, mode %v; want 0600", err, fi)
	}
	if kept, err := datadir.ReadToken(dir); err != nil || kept != token {
		t.Fatalf("kept token %q (%v), printed %q", kept, err, token)
	}
	fi, err = os.Stat(filepath.Join(dir, datadir.RuntimeFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("runtime file: %v, mode %v; want 0600", err, fi)
	}

	for _, tc := range []struct {
		name   string
		url    string
		header http.Header
		want   int
	}{
		{"no token", url, nil, http.StatusUnauthorized},
		{"wrong bearer", url, http.Header{"Authorization": {"Bearer nope"}}, http.StatusUnauthorized},
		{"wrong query", url + "?token=nope", nil, http.StatusUnauthorized},
		{"bearer", url, http.Header{"Authorization": {"Bearer " + token}}, http.StatusSwitchingProtocols},
		{"token query (the printed URL)", printed, nil, http.StatusSwitchingProtocols},
		{"tkn query (VS Code)", url + "?tkn=" + token, nil, http.StatusSwitchingProtocols},
	} {
		if got := dialStatus(t, tc.url, tc.header); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}

	out, errOut, code := runAhp(t, ahp, home, "new")
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("ahp new without flags: exit %d, %q %q", code, out, errOut)
	}
	session := strings.TrimSpace(out)
	if out, errOut, code := runAhp(t, ahp, home, "sessions"); code != 0 || !strings.Contains(out, session) {
		t.Fatalf("ahp sessions without flags: exit %d, %q %q", code, out, errOut)
	}
	// Another user has another data home: it finds nothing there, tries
	// the default URL or (given the URL) is refused.
	other := t.TempDir()
	if _, errOut, code := runAhp(t, ahp, other, "--url", url, "sessions"); code != 6 || !strings.Contains(errOut, "401") {
		t.Fatalf("ahp of another user: exit %d, %q; want 6 (token refused)", code, errOut)
	}

	stop()
	if _, err := os.Stat(filepath.Join(dir, datadir.RuntimeFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("runtime file after stop: %v", err)
	}
	printed, _ = startRun(t)
	if _, again, _ := strings.Cut(printed, "/?token="); again != token {
		t.Fatalf("second start printed %q, want the kept token %q", printed, token)
	}
}

// TestTokenChoices: --token and AHPD_TOKEN replace the kept token (and
// make no file); --no-token needs no token, prints a bare URL and warns.
func TestTokenChoices(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      string
		args     []string
		want     string // token in the printed URL; "" none
		keptFile bool
	}{
		{"default", "", nil, "", true},
		{"flag", "", []string{"--token", "fl4g"}, "fl4g", false},
		{"environment", "3nv", nil, "3nv", false},
		{"flag over environment", "3nv", []string{"--token", "fl4g"}, "fl4g", false},
		{"no token", "", []string{"--no-token"}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AHPD_TOKEN", tc.env)
			dir := t.TempDir()
			printed, _ := startRun(t, append([]string{"--data-dir", dir}, tc.args...)...)
			base, token, _ := strings.Cut(printed, "?token=")
			if tc.want != "" && token != tc.want {
				t.Fatalf("printed %q, want the token %q", printed, tc.want)
			}
			_, err := os.Stat(filepath.Join(dir, datadir.TokenFile))
			if tc.keptFile != (err == nil) {
				t.Fatalf("token file: %v, want it kept: %v", err, tc.keptFile)
			}
			want := http.StatusUnauthorized
			if tc.name == "no token" {
				if token != "" {
					t.Fatalf("--no-token printed %q", printed)
				}
				want = http.StatusSwitchingProtocols
			}
			if got := dialStatus(t, base, nil); got != want {
				t.Fatalf("without a token: status %d, want %d", got, want)
			}
			if got := dialStatus(t, printed, nil); got != http.StatusSwitchingProtocols {
				t.Fatalf("the printed URL: status %d", got)
			}
		})
	}
}

// TestTokenFileNarrowed: a kept token file other users could read is made
// private at start.
func TestTokenFileNarrowed(t *testing.T) {
	t.Setenv("AHPD_TOKEN", "")
	dir := t.TempDir()
	path := filepath.Join(dir, datadir.TokenFile)
	if err := os.WriteFile(path, []byte("k3pt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, 0o644)
	printed, _ := startRun(t, "--data-dir", dir)
	if !strings.HasSuffix(printed, "?token=k3pt") {
		t.Fatalf("printed %q, want the kept token", printed)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v (%v), want 0600", fi.Mode(), err)
	}
}

// TestTokenWithoutDataDir: with no data directory (no home, sessions in
// memory) a given token or --no-token still runs; the kept token cannot.
func TestTokenWithoutDataDir(t *testing.T) {
	t.Setenv("AHPD_TOKEN", "")
	t.Setenv("HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	err := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--store", "memory", "--log-level", "error"}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--token") {
		t.Fatalf("a kept token without a data directory: %v", err)
	}
	for _, args := range [][]string{{"--token", "given"}, {"--no-token"}} {
		printed, stop := startRun(t, args...)
		if got := dialStatus(t, printed, nil); got != http.StatusSwitchingProtocols {
			t.Fatalf("%v: the printed URL %s: status %d", args, printed, got)
		}
		stop()
	}
}
