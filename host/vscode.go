package host

import (
	"maps"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/agent/sessionconfig"
	"github.com/ahp-go/ahp/protocol"
)

// VS Code sends every agent host the same createSession.config, in its own
// words: {"autoApprove": "default", "isolation": "folder", "mode":
// "interactive"}. Keys an agent's schema does not declare are kept and
// ignored (sessionconfig.Check skips them). A "mode" the agent's schema
// does declare, as ACP agents' session modes are, is another matter: the
// agent's modes are its own ids ("default", "acceptEdits", "plan",
// "bypassPermissions"...), and VS Code's value is none of them. Rather
// than refusing the session, the host reads what VS Code asks for and
// picks the agent's mode for it (vscodeConfig); docs/vscode.md lists the
// mapping.

// quietNotifications are notifications outside the spec that clients are
// known to send and the host ignores without a word: VS Code sends
// setClientManagedSettingsPermissions to every agent host it connects to.
var quietNotifications = map[string]bool{
	"setClientManagedSettingsPermissions": true,
}

// vscodeModes are VS Code's intents, each with the agent mode ids that
// carry it, in order of preference (compared without regard to case).
var vscodeModes = map[string][]string{
	// Plan first, change nothing.
	"plan": {"plan", "architect"},
	// Act without asking for each tool.
	"auto": {"bypassPermissions", "yolo", "full-access", "full_access", "bypass", "autopilot", "auto", "agent-full-access"},
}

// vscodeIntent reads what VS Code's config asks for: "plan", "auto", or
// "" for the agent's default (VS Code's "interactive" mode and "default"
// approvals).
func vscodeIntent(given map[string]jsontext.Value) string {
	str := func(name string) string {
		v, ok := given[name]
		if !ok || v.Kind() != '"' {
			return strings.ToLower(string(v))
		}
		var s string
		if err := protocol.Unmarshal(v, &s); err != nil {
			return ""
		}
		return strings.ToLower(s)
	}
	switch mode := str("mode"); mode {
	case "plan":
		return "plan"
	case "autopilot", "autonomous", "agent-auto", "auto":
		return "auto"
	}
	switch str("autoApprove") {
	case "true", "autoapprove", "auto", "all", "bypass", "bypassapprovals", "yolo", "autopilot":
		return "auto"
	}
	return ""
}

// vscodeModeWords are the values VS Code gives "mode".
var vscodeModeWords = []string{"interactive", "plan", "autopilot", "autonomous"}

// fromVSCode reports whether a config is VS Code's: it has VS Code's keys
// besides "mode", or its mode is one of VS Code's words. Another client's
// mode that is not one of the agent's is refused as before.
func fromVSCode(given map[string]jsontext.Value) bool {
	if _, ok := given["autoApprove"]; ok {
		return true
	}
	if _, ok := given["isolation"]; ok {
		return true
	}
	var mode string
	return protocol.Unmarshal(given["mode"], &mode) == nil && slices.Contains(vscodeModeWords, mode)
}

// vscodeConfig returns given, when it is VS Code's, with a "mode" that
// the agent's schema does not allow replaced by the agent's mode for what VS Code asks for, or
// removed when the agent has none (its default then applies). Any other
// config is returned as it is.
func vscodeConfig(schema *protocol.SessionConfigSchema, given map[string]jsontext.Value) map[string]jsontext.Value {
	v, ok := given["mode"]
	if !ok || !fromVSCode(given) {
		return given
	}
	prop, declared := schema.Properties["mode"]
	if !declared || sessionconfig.CheckValue(&prop, v) == "" {
		return given
	}
	out := maps.Clone(given)
	delete(out, "mode")
	if prop.Type != protocol.SessionConfigPropertySchemaTypeString {
		return out
	}
	for _, want := range vscodeModes[vscodeIntent(given)] {
		i := slices.IndexFunc(prop.Enum, func(e protocol.JSONPrimitive) bool {
			var s string
			return protocol.Unmarshal(jsontext.Value(e), &s) == nil && strings.EqualFold(s, want)
		})
		if i >= 0 {
			out["mode"] = jsontext.Value(slices.Clone(prop.Enum[i]))
			return out
		}
	}
	return out
}
