package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-json-experiment/json"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/workspace"
)

func TestMain(m *testing.M) {
	acptest.ServeIfAsked()
	os.Exit(m.Run())
}

// newSignInHarness serves a host with a workspace and the test ACP agent
// as provider "keyed", which needs the key "sk-cli-42" or its login
// (a terminal method writing marker).
func newSignInHarness(t *testing.T, marker string) *harness {
	cfg := acp.Config{Name: "keyed", Command: os.Args[0], Args: []string{"-test.run=^$"}, Env: map[string]string{
		acptest.AgentEnv: "1", acptest.AuthMethodsEnv: "key", acptest.RequireKeyEnv: "sk-cli-42", acptest.LoginFileEnv: marker,
	}}
	b, err := acp.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Probe(t.Context()); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(&host.Options{Agents: []agent.Backend{b}, Workspace: workspace.New(&workspace.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h.WebSocketHandler(nil))
	t.Cleanup(func() {
		h.Close()
		srv.Close()
	})
	return &harness{t: t, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

// TestLogin: `ahp agents` shows an agent that needs sign-in and its
// methods; `ahp login --key-stdin` signs it in with a key read from stdin
// (a wrong key is refused); and the login method runs in a terminal on
// the host, after which the agent is ready.
func TestLogin(t *testing.T) {
	t.Run("key", func(t *testing.T) {
		h := newSignInHarness(t, filepath.Join(t.TempDir(), "marker"))
		r := h.cmd("", "agents").run(t)
		for _, want := range []string{"state: needs sign-in", "sign-in key key: API key (ACPTEST_API_KEY) (ahp login keyed --method key --key-stdin)", "sign-in login login: Log in (ahp login keyed --method login)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("ahp agents: %q lacks %q", r.stdout, want)
			}
		}
		// The JSON line has the documented shape: name, title,
		// description, state, sign-in methods, models.
		j := h.cmd("", "--json", "agents").run(t)
		var got []map[string]any
		for line := range strings.Lines(j.stdout) {
			var v map[string]any
			if err := json.Unmarshal([]byte(line), &v); err != nil {
				t.Fatalf("ahp --json agents printed %q: %v", line, err)
			}
			got = append(got, v)
		}
		if len(got) != 1 || got[0]["name"] != "keyed" || got[0]["state"] != "needs sign-in" {
			t.Fatalf("ahp --json agents: %q", j.stdout)
		}
		methods, _ := got[0]["signIn"].([]any)
		var kinds []string
		for _, m := range methods {
			m, _ := m.(map[string]any)
			kinds = append(kinds, fmt.Sprint(m["id"], ":", m["kind"]))
		}
		if strings.Join(kinds, " ") != "key:key login:login" {
			t.Errorf("ahp --json agents: sign-in methods %v, want key:key login:login", kinds)
		}
		if r := h.cmd("", "new").run(t); r.code != exitAuth || !strings.Contains(r.stderr, "sign in with: ahp login keyed") {
			t.Errorf("ahp new before sign-in: exit %d, stderr %q", r.code, r.stderr)
		}
		for _, tc := range []struct {
			name, stdin string
			args        []string
			code        int
			out         string
		}{
			{"a wrong key", "sk-wrong\n", []string{"login", "--key-stdin", "keyed"}, exitAuth, "did not accept the key"},
			{"no key", "\n", []string{"login", "--key-stdin", "keyed"}, exitUsage, "no key given"},
			{"an unknown agent", "x\n", []string{"login", "--key-stdin", "nope"}, exitUsage, `no agent "nope"`},
			{"an unknown method", "x\n", []string{"login", "--method", "sso", "keyed"}, exitUsage, `no sign-in method "sso"`},
			{"a key for a login", "x\n", []string{"login", "--key-stdin", "--method", "login", "keyed"}, exitUsage, "takes no key"},
			{"the right key", "sk-cli-42\n", []string{"login", "--key-stdin", "keyed"}, exitOK, "keyed: ready"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				r := h.cmd(tc.stdin, tc.args...).run(t)
				if r.code != tc.code || !strings.Contains(r.stderr, tc.out) {
					t.Fatalf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.out)
				}
				if strings.Contains(r.stdout+r.stderr, "sk-") {
					t.Fatalf("the key was printed: %q %q", r.stdout, r.stderr)
				}
			})
		}
		if r := h.cmd("", "agents").run(t); !strings.Contains(r.stdout, "state: ready") {
			t.Errorf("after signing in: %q", r.stdout)
		}
		if r := h.cmd("", "new").run(t); r.code != exitOK {
			t.Errorf("ahp new after sign-in: exit %d, stderr %q", r.code, r.stderr)
		}
	})
	t.Run("terminal", func(t *testing.T) {
		marker := filepath.Join(t.TempDir(), "marker")
		h := newSignInHarness(t, marker)
		r := h.cmd("", "login", "--method", "login", "keyed").run(t)
		if r.code != exitOK || !strings.Contains(r.stdout, "Signed in.") || !strings.Contains(r.stderr, "keyed: ready") {
			t.Fatalf("exit %d\nstdout %q\nstderr %q", r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(marker); err != nil {
			t.Fatalf("the login did not run: %v", err)
		}
	})
}
