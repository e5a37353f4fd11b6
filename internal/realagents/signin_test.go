package realagents_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/internal/modelserver"
	"github.com/ahp-go/ahp/internal/realagents"
	"github.com/ahp-go/ahp/protocol"
)

// TestGeminiSignIn: Gemini CLI without a key needs sign-in, and lists its
// API-key method as a protected resource; a client's authenticate with
// the key makes it ready, and a session streams a turn from the scripted
// model. The key is in no log line.
func TestGeminiSignIn(t *testing.T) {
	t.Parallel()
	r := newRig(t, realagents.Gemini, func(c *acp.Config) { c.Env["GEMINI_API_KEY"] = "" })
	if st, why := r.b.State(); st != acp.StateNeedsSignIn {
		t.Fatalf("without a key: %s (%s), want needs sign-in", st, why)
	}
	var resource string
	for _, p := range r.b.Info().ProtectedResources {
		if strings.HasSuffix(p.Resource, "/key/gemini-api-key") {
			resource = p.Resource
			if p.Required == nil || !*p.Required {
				t.Errorf("the key method is not required: %+v", p)
			}
		}
	}
	if resource == "" {
		t.Fatalf("no key method among %+v", r.b.Info().ProtectedResources)
	}
	checkKnownLogin(t, r.b, "oauth-personal", "gemini")
	root, err := r.w.Subscribe(r.ctx, &protocol.SubscribeParams{Channel: protocol.RootURI})
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx, cancel := context.WithTimeout(r.ctx, wait)
	defer cancel()
	if _, err := r.a.Authenticate(ctx, &protocol.AuthenticateParams{Resource: resource, Token: realagents.Key}); err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	// The watcher sees the agent ready.
	for {
		ags := root.State().(*protocol.RootState).Agents
		if len(ags) == 1 && !strings.HasPrefix(ags[0].Description, "Needs sign-in") {
			break
		}
		if _, err := root.Next(ctx); err != nil {
			t.Fatalf("waiting for the agent ready: %v", err)
		}
	}
	c := r.newChat(nil)
	r.model.Handle("say hello", modelserver.Scenario{modelserver.Text("Signed in and streaming.")})
	turn := c.send("please say hello")
	if end := c.end(turn); end.Type() != "chat/turnComplete" {
		t.Fatalf("turn ended with %+v", end)
	}
	if got := markdown(c.turn(turn).ResponseParts); !strings.Contains(got, "Signed in and streaming.") {
		t.Errorf("the watcher's turn reads %q", got)
	}
	if strings.Contains(r.logBuf.String(), realagents.Key) {
		t.Error("the key is in the log")
	}
}

// TestClaudeSignInMethods: Claude Code without a key needs sign-in and
// offers its two logins (subscription, console), each run as the agent's
// own command with its login arguments in a terminal.
func TestClaudeSignInMethods(t *testing.T) {
	t.Parallel()
	r := newRig(t, realagents.Claude, func(c *acp.Config) { c.Env["ANTHROPIC_API_KEY"] = "" })
	// Claude Code reports its sign-in from a check of its own (`claude
	// auth status`), and nothing when that check fails or takes over 5 s,
	// as it can on a loaded machine. Probe again then.
	for i := 0; i < 3; i++ {
		if st, _ := r.b.State(); st != acp.StateReady || !strings.Contains(r.logBuf.String(), "claude auth status") {
			break
		}
		t.Log("Claude Code did not report its sign-in in time; probing again")
		ctx, cancel := context.WithTimeout(r.ctx, wait)
		err := r.b.Probe(ctx)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
	}
	switch st, why := r.b.State(); {
	case st == acp.StateNeedsSignIn:
	case st == acp.StateReady && strings.Contains(r.logBuf.String(), "claude auth status"):
		// Its check failed every time (a machine too loaded for its 5 s):
		// it said nothing, so there is no state to check; its methods
		// still are.
		t.Log("Claude Code never reported its sign-in; its state is not checked")
	default:
		t.Fatalf("without a key: %s (%s), want needs sign-in", st, why)
	}
	var logins []string
	for _, p := range r.b.Info().ProtectedResources {
		if !strings.Contains(p.Resource, "/login/") {
			t.Errorf("a method other than a login: %+v", p)
			continue
		}
		cmd, err := r.b.LoginCommand(p.Resource)
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Command != r.b.Config().Command || !strings.Contains(strings.Join(cmd.Args, " "), "auth login") {
			t.Errorf("login %s runs %s %q", p.Resource, cmd.Command, cmd.Args)
		}
		logins = append(logins, p.Resource[strings.LastIndexByte(p.Resource, '/')+1:])
	}
	if strings.Join(logins, ",") != "claude-ai-login,console-login" {
		t.Errorf("logins %q, want claude-ai-login and console-login", logins)
	}
}

// TestCodexSignIn: Codex with no key says it is not signed in; its
// API-key method takes the key from a client (into OPENAI_API_KEY, then
// ACP authenticate), after which it is ready and a turn streams.
func TestCodexSignIn(t *testing.T) {
	t.Parallel()
	r := newRig(t, realagents.Codex, func(c *acp.Config) {
		c.Env["SCRIPTED_API_KEY"] = ""
		// The scripted provider reads the key the sign-in sets.
		path := filepath.Join(c.Env["CODEX_HOME"], "config.toml")
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		data = bytes.ReplaceAll(data, []byte(`env_key = "SCRIPTED_API_KEY"`), []byte(`env_key = "OPENAI_API_KEY"`))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
	})
	st, why := r.b.State()
	t.Logf("without a key: %s (%s)", st, why)
	var resource string
	for _, p := range r.b.Info().ProtectedResources {
		if strings.HasSuffix(p.Resource, "/key/api-key") {
			resource = p.Resource
		}
	}
	if resource == "" {
		t.Fatalf("no key method among %+v", r.b.Info().ProtectedResources)
	}
	checkKnownLogin(t, r.b, "chat-gpt", "codex", "login")
	ctx, cancel := context.WithTimeout(r.ctx, wait)
	defer cancel()
	if _, err := r.a.Authenticate(ctx, &protocol.AuthenticateParams{Resource: resource, Token: realagents.Key}); err != nil {
		t.Fatalf("authenticate: %v", err)
	}
	if st, why := r.b.State(); st != acp.StateReady {
		t.Fatalf("after signing in: %s (%s)", st, why)
	}
	c := r.newChat(nil)
	r.model.Handle("say hello", modelserver.Scenario{modelserver.Text("Signed in and streaming.")})
	turn := c.send("please say hello")
	if end := c.end(turn); end.Type() != "chat/turnComplete" {
		t.Fatalf("turn ended with %+v", end)
	}
	if strings.Contains(r.logBuf.String(), realagents.Key) {
		t.Error("the key is in the log")
	}
}

// checkKnownLogin fails unless the agent offers the login of method as a
// terminal running program (found beside the agent's command) with args.
func checkKnownLogin(t *testing.T, b *acp.Backend, method, program string, args ...string) {
	t.Helper()
	for _, p := range b.Info().ProtectedResources {
		if !strings.HasSuffix(p.Resource, "/login/"+method) {
			continue
		}
		cmd, err := b.LoginCommand(p.Resource)
		if err != nil {
			t.Fatalf("login %s: %v", method, err)
		}
		if filepath.Base(cmd.Command) != program || strings.Join(cmd.Args, " ") != strings.Join(args, " ") {
			t.Errorf("login %s runs %s %q, want %s %q", method, cmd.Command, cmd.Args, program, args)
		}
		return
	}
	t.Errorf("no login %s among %+v", method, b.Info().ProtectedResources)
}
