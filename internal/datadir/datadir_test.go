package datadir

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

func TestDefault(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"xdg", map[string]string{"XDG_DATA_HOME": "/d", "HOME": "/h"}, "/d/ahpd"},
		{"relative xdg ignored", map[string]string{"XDG_DATA_HOME": "d", "HOME": "/h"}, "/h/.local/share/ahpd"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.local/share/ahpd"},
	} {
		got, err := Default(func(k string) string { return tc.env[k] })
		if err != nil || got != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.name, got, err, tc.want)
		}
	}
}

func TestLoadOrCreateToken(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	tok, created, fixed, err := LoadOrCreateToken(dir)
	if err != nil || !created || fixed || len(tok) != 2*tokenBytes {
		t.Fatalf("first: %q %v %v %v", tok, created, fixed, err)
	}
	for path, mode := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, TokenFile): 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
			t.Fatalf("%s: %v %v, want mode %o", path, fi.Mode(), err, mode)
		}
	}
	again, created, _, err := LoadOrCreateToken(dir)
	if err != nil || created || again != tok {
		t.Fatalf("second: %q %v %v, want %q kept", again, created, err, tok)
	}
	if other := NewToken(); other == tok {
		t.Fatal("two tokens alike")
	}

	// Concurrent first starts agree on one token.
	dir2 := t.TempDir()
	toks := make([]string, 8)
	var wg sync.WaitGroup
	for i := range toks {
		wg.Go(func() { toks[i], _, _, _ = LoadOrCreateToken(dir2) })
	}
	wg.Wait()
	for _, tk := range toks {
		if tk != toks[0] || tk == "" {
			t.Fatalf("concurrent starts: %q", toks)
		}
	}

	for _, tc := range []struct{ name, content string }{
		{"empty", "\n"},
		{"spaces inside", "a b\n"},
	} {
		d := t.TempDir()
		os.WriteFile(filepath.Join(d, TokenFile), []byte(tc.content), 0o600)
		if _, _, _, err := LoadOrCreateToken(d); err == nil {
			t.Errorf("%s token file accepted", tc.name)
		}
	}
	if _, err := ReadToken(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no token file: %v", err)
	}
}

func TestRuntime(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadRuntime(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("none yet: %v", err)
	}
	rt := Runtime{URL: "ws://127.0.0.1:7247/", Token: "t", PID: 1}
	if err := WriteRuntime(dir, rt); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(dir, RuntimeFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v %v", fi.Mode(), err)
	}
	if got, err := ReadRuntime(dir); err != nil || got != rt {
		t.Fatalf("read %+v %v", got, err)
	}
	// A later ahpd replaced it: removing the earlier one's leaves it.
	later := Runtime{URL: "ws://127.0.0.1:7248/", PID: 2}
	WriteRuntime(dir, later)
	RemoveRuntime(dir, rt)
	if got, err := ReadRuntime(dir); err != nil || got != later {
		t.Fatalf("after removing another's: %+v %v", got, err)
	}
	RemoveRuntime(dir, later)
	if _, err := ReadRuntime(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("after removing its own: %v", err)
	}
	os.WriteFile(filepath.Join(dir, RuntimeFile), []byte("{}"), 0o600)
	if _, err := ReadRuntime(dir); err == nil {
		t.Fatal("a runtime file without a URL was read")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary files left: %v", ents)
	}
}

func TestURLs(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want string
	}{
		{"127.0.0.1:7247", "ws://127.0.0.1:7247/"},
		{"0.0.0.0:80", "ws://127.0.0.1:80/"},
		{"[::]:80", "ws://[::1]:80/"},
		{"[::1]:9", "ws://[::1]:9/"},
	} {
		addr, _ := net.ResolveTCPAddr("tcp", tc.addr)
		if got := LocalURL(addr); got != tc.want {
			t.Errorf("LocalURL(%s) = %s, want %s", tc.addr, got, tc.want)
		}
	}
	for _, tc := range []struct {
		url      string
		loopback bool
	}{
		{"ws://127.0.0.1:7247/", true},
		{"ws://localhost:1/", true},
		{"ws://LOCALHOST/", true},
		{"ws://[::1]:7/", true},
		{"ws://127.9.9.9/", true},
		{"ws://ahp.example:7247/", false},
		{"ws://10.0.0.1:7247/", false},
		{"ws://localhost.evil.example/", false},
		{"::bad", false},
	} {
		if got := IsLoopbackURL(tc.url); got != tc.loopback {
			t.Errorf("IsLoopbackURL(%s) = %v", tc.url, got)
		}
	}
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"ws://127.0.0.1:7247/", "ws://localhost:7247/x", true},
		{"ws://127.0.0.1:7247/", "ws://127.0.0.1:7248/", false},
		{"ws://127.0.0.1/", "ws://localhost:80/", true},
		{"ws://127.0.0.1:7247/", "ws://ahp.example:7247/", false},
	} {
		if got := SameEndpoint(tc.a, tc.b); got != tc.same {
			t.Errorf("SameEndpoint(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}

func TestRuntimeLive(t *testing.T) {
	for _, tc := range []struct {
		name string
		pid  int
		live bool
	}{
		{"this process", os.Getpid(), true},
		{"unknown", 0, true},
		{"gone", goneProcess(t), false},
	} {
		if got := (Runtime{URL: "ws://127.0.0.1:1/", PID: tc.pid}).Live(); got != tc.live {
			t.Errorf("%s: Live = %v", tc.name, got)
		}
	}
}

// goneProcess returns the id of a process that has ended and was reaped.
func goneProcess(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
