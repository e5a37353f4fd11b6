package acp_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/acp/acptest"
	"github.com/ahp-go/ahp/protocol"
)

// turnError returns the chat/error that ended a turn, failing the test
// when the turn ended otherwise.
func turnError(t *testing.T, end *protocol.ActionEnvelope) protocol.ErrorInfo {
	t.Helper()
	e, ok := end.Action.(*protocol.ChatErrorAction)
	if !ok {
		t.Fatalf("turn ended with %s, want chat/error", end.Action.Type())
	}
	return e.Info()
}

// TestBrokenConnectionRestarts: when the ACP connection dies while the
// agent process lives on (a message longer than an ACP client reads, or
// stdout closed), the process is stopped, the turn fails as in a crash,
// and the next turn runs on a new process.
func TestBrokenConnectionRestarts(t *testing.T) {
	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	for i, tc := range []struct{ prompt, want string }{
		{"say before\nbigline 11", "more than 10 MiB"},
		{"say before\ncloseout", "connection closed while the process kept running"},
	} {
		t.Run(strings.Fields(tc.prompt)[2], func(t *testing.T) {
			_, chat := a.newSession("s"+strconv.Itoa(i), "test", t.TempDir())
			turn := a.startTurn(chat, "t1-"+strconv.Itoa(i), tc.prompt)
			e := turnError(t, a.waitTurnEnd(turn))
			if e.ErrorType != "agentCrashed" || !strings.Contains(e.Message, tc.want) || !strings.Contains(e.Message, "will be restarted") {
				t.Errorf("error %+v, want agentCrashed saying %q", e, tc.want)
			}
			next := a.startTurn(chat, "t2-"+strconv.Itoa(i), "say back")
			if end := a.waitTurnEnd(next); end.Action.Type() != "chat/turnComplete" {
				t.Fatalf("the turn after the broken connection: %+v", end.Action)
			}
		})
	}
}

// TestGarbageOnStdout: an agent that writes something other than JSON-RPC
// on stdout fails at once with a message that quotes it, rather than
// leaving the host to wait out a timeout: at the probe, and in a turn.
func TestGarbageOnStdout(t *testing.T) {
	cfg := testConfig("garbage")
	cfg.Env[acptest.GarbageEnv] = "1"
	b, err := acp.New(cfg, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = b.Probe(ctx)
	if err == nil || !strings.Contains(err.Error(), "other than ACP") || !strings.Contains(err.Error(), "Welcome to the test agent!") {
		t.Fatalf("probe: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("the probe waited for its deadline")
	}
	if d := b.Info().Description; !strings.Contains(d, "other than ACP") {
		t.Errorf("description %q does not say why the agent failed", d)
	}

	th := startHost(t, newBackend(t, nil))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", t.TempDir())
	turn := a.startTurn(chat, "t1", "garbage")
	e := turnError(t, a.waitTurnEnd(turn))
	if !strings.Contains(e.Message, "other than ACP") || !strings.Contains(e.Message, "this is not JSON-RPC") {
		t.Errorf("error %+v", e)
	}
}

// records is a slog handler that keeps every record's message and
// attributes as text.
type records struct {
	mu    sync.Mutex
	lines []string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	var b strings.Builder
	b.WriteString(rec.Message)
	rec.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	r.mu.Lock()
	r.lines = append(r.lines, b.String())
	r.mu.Unlock()
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.lines...)
}

// TestStderrLogBounded: a flood on the agent's stderr is logged within a
// bound, the rest counted, and terminal escapes never reach the log.
func TestStderrLogBounded(t *testing.T) {
	rec := &records{}
	th := startHost(t, newBackend(t, &acp.Options{Logger: slog.New(rec)}))
	a := th.dial(t, "a")
	_, chat := a.newSession("s1", "test", t.TempDir())
	turn := a.startTurn(chat, "t1", "spam 20000")
	if end := a.waitTurnEnd(turn); end.Action.Type() != "chat/turnComplete" {
		t.Fatalf("turn: %+v", end.Action)
	}
	// The count of lines not logged comes once the stream ends (or the
	// next logged line): close the session.
	th.h.Close()
	var logged, dropped int
	for _, l := range rec.all() {
		if strings.ContainsRune(l, 0x1b) || strings.ContainsRune(l, 0x07) {
			t.Fatalf("escape sequence in the log: %q", l)
		}
		switch {
		case strings.HasPrefix(l, "agent stderr: lines not logged"):
			_, n, _ := strings.Cut(l, "dropped=")
			k, _ := strconv.Atoi(strings.Fields(n)[0])
			dropped += k
		case strings.HasPrefix(l, "agent stderr"):
			if !strings.Contains(l, "of spam") {
				t.Logf("other stderr line: %q", l)
			}
			logged++
			if logged == 1 && !strings.Contains(l, "line=line 1 of spam") {
				t.Errorf("first line logged as %q", l)
			}
		}
	}
	if logged > 200 || logged == 0 {
		t.Errorf("%d stderr lines logged", logged)
	}
	// The agent's SDK may log a line of its own as it stops.
	if n := logged + dropped; n < 20000 || n > 20005 {
		t.Errorf("%d logged + %d counted as dropped, want the 20000 lines written", logged, dropped)
	}
}

// TestAuthMethods: the agent's authentication methods are listed in its
// root entry, and an authMethod it does not offer is refused with the
// ones it does.
func TestAuthMethods(t *testing.T) {
	cfg := testConfig("auth")
	cfg.Env[acptest.AuthMethodsEnv] = "key,sso"
	b, err := acp.New(cfg, testOptions(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	// A ready agent lists the methods a client can use as protected
	// resources, not required: the key method; the agent method "sso"
	// has no login command, so it is not one.
	info := b.Info()
	if len(info.ProtectedResources) != 1 || info.ProtectedResources[0].Resource != acp.ResourcePrefix+"auth/key/key" ||
		*info.ProtectedResources[0].ResourceName != "API key (ACPTEST_API_KEY)" || *info.ProtectedResources[0].Required {
		t.Errorf("protected resources %+v", info.ProtectedResources)
	}
	if strings.Contains(info.Description, "Sign-in") {
		t.Errorf("description %q lists methods though the agent is ready", info.Description)
	}
	cfg.LoginCommands = map[string][]string{"sso": {"true"}}
	b, _ = acp.New(cfg, testOptions(t))
	if err := b.Probe(context.Background()); err != nil {
		t.Fatal(err)
	}
	if rs := b.Info().ProtectedResources; len(rs) != 2 || rs[1].Resource != acp.ResourcePrefix+"auth/login/sso" {
		t.Errorf("with a login command for sso: %+v", rs)
	}

	cfg.AuthMethod = "sso"
	b, _ = acp.New(cfg, testOptions(t))
	if err := b.Probe(context.Background()); err != nil {
		t.Fatalf("an offered method: %v", err)
	}
	if d := b.Info().Description; strings.Contains(d, "Sign-in") {
		t.Errorf("description %q lists methods though ahpd signs in with one", d)
	}

	cfg.AuthMethod = "oauth"
	b, _ = acp.New(cfg, testOptions(t))
	err = b.Probe(context.Background())
	if err == nil || !strings.Contains(err.Error(), `"oauth"`) || !strings.Contains(err.Error(), `it offers "key", "sso"`) {
		t.Fatalf("probe with a method not offered: %v", err)
	}
	// Refused by the agent it offers a way to sign in: it needs sign-in,
	// and its description lists every method.
	if st, _ := b.State(); st != acp.StateNeedsSignIn {
		t.Errorf("state %s, want needs-sign-in", st)
	}
	d := b.Info().Description
	for _, want := range []string{"Needs sign-in: ", "API key (key) [a key for ACPTEST_API_KEY]", "Log in as sso (sso): Opens a browser"} {
		if !strings.Contains(d, want) {
			t.Errorf("description %q lacks %q", d, want)
		}
	}
	// The host refuses its sessions until it is signed in: AuthRequired,
	// with the resources to sign in with in the error's data.
	th := startHost(t, b)
	c := th.dial(t, "c")
	sess := protocol.SessionURI("s1")
	err = c.Call("createSession", &protocol.CreateSessionParams{Channel: sess, Provider: protocol.Ptr("auth"), WorkingDirectories: []string{"file://" + t.TempDir()}}, nil)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeAuthRequired {
		t.Fatalf("createSession on an agent that needs sign-in: %v, want AuthRequired", err)
	}
	var data protocol.AuthRequiredErrorData
	if err := protocol.Unmarshal(pe.Data, &data); err != nil || len(data.Resources) == 0 {
		t.Errorf("the refusal's data %s lists no resource to sign in with (%v)", pe.Data, err)
	}
}
