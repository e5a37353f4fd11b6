package host_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/agent/sessionconfig"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/jsonrpc"
	"github.com/ahp-go/ahp/protocol"
)

// modesBackend is an agent whose configuration schema has session modes,
// as ACP agents' have.
type modesBackend struct {
	namedBackend
	modes []string
}

func (b modesBackend) SessionConfigSchema(context.Context, agent.ConfigRequest) (*protocol.SessionConfigSchema, error) {
	prop := protocol.SessionConfigPropertySchema{Type: protocol.SessionConfigPropertySchemaTypeString, Title: "Mode", Default: sessionconfig.Value(b.modes[0])}
	for _, m := range b.modes {
		prop.Enum = append(prop.Enum, protocol.JSONPrimitive(sessionconfig.Value(m)))
	}
	return &protocol.SessionConfigSchema{Properties: map[string]protocol.SessionConfigPropertySchema{"mode": prop}}, nil
}

// TestVSCodeSessionConfig: VS Code's createSession.config is never
// refused; its autoApprove and mode choose the agent's mode where the
// agent has one that fits (docs/vscode.md).
func TestVSCodeSessionConfig(t *testing.T) {
	claude := modesBackend{namedBackend{"claude"}, []string{"default", "acceptEdits", "plan", "bypassPermissions"}}
	gemini := modesBackend{namedBackend{"gemini"}, []string{"default", "autoEdit", "yolo"}}
	other := modesBackend{namedBackend{"other"}, []string{"ask", "code"}}
	h := pipeHost(t, &host.Options{Agents: []agent.Backend{echo.New(&echo.Options{WordDelay: -1}), claude, gemini, other}})
	c := pipeDial(t, h)
	c.initialize("vscode")
	vscode := func(autoApprove, mode string) map[string]jsontext.Value {
		return map[string]jsontext.Value{"autoApprove": sessionconfig.Value(autoApprove), "isolation": sessionconfig.Value("folder"), "mode": sessionconfig.Value(mode)}
	}
	tests := []struct {
		name, provider string
		config         map[string]jsontext.Value
		wantMode       string // "" when the agent has no mode, "refused"
	}{
		{"echo takes no config", "echo", vscode("default", "interactive"), ""},
		{"interactive is the agent's default", "claude", vscode("default", "interactive"), `"default"`},
		{"plan", "claude", vscode("default", "plan"), `"plan"`},
		{"auto-approve", "claude", vscode("autoApprove", "interactive"), `"bypassPermissions"`},
		{"autopilot", "claude", vscode("default", "autopilot"), `"bypassPermissions"`},
		{"yolo", "gemini", vscode("yolo", "interactive"), `"yolo"`},
		{"no plan mode", "gemini", vscode("default", "plan"), `"default"`},
		{"no fitting mode", "other", vscode("autoApprove", "interactive"), `"ask"`},
		{"the agent's own mode", "claude", vscode("default", "acceptEdits"), `"acceptEdits"`},
		{"a mode that is not a string", "claude", map[string]jsontext.Value{"mode": jsontext.Value(`7`), "autoApprove": sessionconfig.Value("default")}, `"default"`},
		{"VS Code's word alone", "claude", map[string]jsontext.Value{"mode": sessionconfig.Value("interactive")}, `"default"`},
		// Another client's mode that the agent does not have is refused.
		{"not VS Code's", "claude", map[string]jsontext.Value{"mode": sessionconfig.Value("fly")}, "refused"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			uri := tt.provider + ":/" + string(rune('a'+i))
			err := c.call("createSession", &protocol.CreateSessionParams{Channel: uri, Provider: &tt.provider, Config: tt.config, ProgressToken: protocol.Ptr("tok")}, nil)
			if tt.wantMode == "refused" {
				if rpcCode(err) != protocol.CodeInvalidParams {
					t.Fatalf("createSession: %v, want -32602", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			st := c.subscribe(uri).State.(*protocol.SessionState)
			if tt.wantMode == "" {
				return
			}
			if st.Config == nil {
				t.Fatal("no config")
			}
			if got := string(st.Config.Values["mode"]); got != tt.wantMode {
				t.Errorf("mode %s, want %s", got, tt.wantMode)
			}
		})
	}
	// resolveSessionConfig reads VS Code's config the same way.
	var res protocol.ResolveSessionConfigResult
	c.must("resolveSessionConfig", &protocol.ResolveSessionConfigParams{Provider: protocol.Ptr("claude"), Config: vscode("autoApprove", "interactive")}, &res)
	if got := string(res.Values["mode"]); got != `"bypassPermissions"` {
		t.Errorf("resolveSessionConfig: mode %s", got)
	}
}

// recordHandler keeps the log records at Info and above.
type recordHandler struct {
	mu   sync.Mutex
	recs []string
}

func (r *recordHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }
func (r *recordHandler) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec.Message)
	return nil
}
func (r *recordHandler) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *recordHandler) WithGroup(string) slog.Handler      { return r }

// TestVSCodeMessages replays what VS Code 1.139 sends an agent host: its
// initialize, a createSession with its config and a progressToken, its
// host settings on the root channel and its settings-permissions
// notification. Each is handled, without error or log lines.
func TestVSCodeMessages(t *testing.T) {
	logs := &recordHandler{}
	h := pipeHost(t, &host.Options{Logger: slog.New(logs)})
	c := pipeDial(t, h)
	var init protocol.InitializeResult
	c.must("initialize", jsontext.Value(`{"channel":"ahp-root://","protocolVersions":["0.9.0","0.7.0","0.6.0","0.5.2","0.5.1"],"clientId":"vscode-1","clientInfo":{"name":"vscode-editor-window"},"initialSubscriptions":["ahp-root://"]}`), &init)
	if init.ProtocolVersion != "0.9.0" {
		t.Fatalf("negotiated %s, want 0.9.0", init.ProtocolVersion)
	}
	c.must("createSession", jsontext.Value(`{"channel":"echo:/cf73d5a0-8f7e-4b9e-9a56-2f8d1c3e4b5a","provider":"echo","workingDirectories":["file:///tmp"],"config":{"autoApprove":"default","isolation":"folder","mode":"interactive"},"progressToken":"7d1c"}`), nil)
	c.notify("setClientManagedSettingsPermissions", jsontext.Value(`{"channel":"ahp-root://","permissions":{"chat.tools.autoApprove":"managed"}}`))
	c.notify("dispatchAction", jsontext.Value(`{"channel":"ahp-root://","clientSeq":1,"action":{"type":"root/configChanged","config":{"chat.tools.global.autoApprove":false,"chat.agent.maxRequests":25}}}`))
	waitFor(t, c, func(n *jsonrpc.Request) bool {
		if n.Method != "action" || !bytes.Contains(n.Params, []byte(`"root/configChanged"`)) {
			return false
		}
		if bytes.Contains(n.Params, []byte("rejectionReason")) {
			t.Errorf("root/configChanged rejected: %s", n.Params)
		}
		return true
	})
	c.must("ping", jsontext.Value(`{"channel":"ahp-root://"}`), nil)
	logs.mu.Lock()
	defer logs.mu.Unlock()
	for _, m := range logs.recs {
		if strings.Contains(m, "notification") || strings.Contains(m, "unknown") {
			t.Errorf("logged %q", m)
		}
	}
}
