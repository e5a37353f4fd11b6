package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/ahp-go/ahp/internal/datadir"
)

// TestLocalDiscovery: without --url/--token and their variables, ahp
// takes the URL and token of the local ahpd from its default data
// directory; what is given wins, and the kept token never goes to a host
// that is not this machine.
func TestLocalDiscovery(t *testing.T) {
	const running = "ws://127.0.0.1:45678/"
	for _, tc := range []struct {
		name               string
		runtime, tokenFile bool
		stale              bool // the runtime file's ahpd is gone
		flags              globals
		env                map[string]string
		wantURL, wantToken string
	}{
		{name: "nothing kept", wantURL: defaultURL},
		{name: "token file only", tokenFile: true, wantURL: defaultURL, wantToken: "kept"},
		{name: "running ahpd", runtime: true, tokenFile: true, wantURL: running, wantToken: "live"},
		{name: "ahpd killed", runtime: true, stale: true, tokenFile: true, wantURL: defaultURL, wantToken: "kept"},
		{name: "URL of the running one given", runtime: true, tokenFile: true, flags: globals{url: "ws://localhost:45678/"}, wantURL: "ws://localhost:45678/", wantToken: "live"},
		{name: "another local port", runtime: true, tokenFile: true, flags: globals{url: "ws://127.0.0.1:9/"}, wantURL: "ws://127.0.0.1:9/", wantToken: "kept"},
		{name: "remote URL", runtime: true, tokenFile: true, flags: globals{url: "ws://ahp.example:7247/"}, wantURL: "ws://ahp.example:7247/"},
		{name: "remote AHP_URL", runtime: true, tokenFile: true, env: map[string]string{"AHP_URL": "ws://10.1.2.3:7247/"}, wantURL: "ws://10.1.2.3:7247/"},
		{name: "token flag", runtime: true, tokenFile: true, flags: globals{token: "mine"}, wantURL: running, wantToken: "mine"},
		{name: "AHP_TOKEN", runtime: true, env: map[string]string{"AHP_TOKEN": "env"}, wantURL: running, wantToken: "env"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			dir := filepath.Join(home, "ahpd")
			os.MkdirAll(dir, 0o700)
			if tc.runtime {
				pid := os.Getpid()
				if tc.stale {
					cmd := exec.Command("true")
					if err := cmd.Run(); err != nil {
						t.Fatal(err)
					}
					pid = cmd.Process.Pid
				}
				if err := datadir.WriteRuntime(dir, datadir.Runtime{URL: running, Token: "live", PID: pid}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.tokenFile {
				os.WriteFile(filepath.Join(dir, datadir.TokenFile), []byte("kept\n"), 0o600)
			}
			g := tc.flags
			g.fill(func(k string) string {
				if k == "XDG_DATA_HOME" {
					return home
				}
				return tc.env[k]
			})
			if g.url != tc.wantURL || g.token != tc.wantToken {
				t.Fatalf("url %q token %q, want %q %q", g.url, g.token, tc.wantURL, tc.wantToken)
			}
		})
	}
}
