package realagents

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/agent/acp"
)

// Key is the API key the agents send to the scripted server.
const Key = "sk-scripted-test-key"

// Config returns the ACP configuration that runs the agent's program
// against the model server at baseURL (http://127.0.0.1:PORT), with home
// as its HOME, set up there as the agent needs (see docs/agents.md).
func Config(a Agent, bin, baseURL, home string) (acp.Config, error) {
	env := map[string]string{
		"HOME":                   home,
		"XDG_CONFIG_HOME":        filepath.Join(home, ".config"),
		"XDG_CACHE_HOME":         filepath.Join(home, ".cache"),
		"XDG_DATA_HOME":          filepath.Join(home, ".local", "share"),
		"NO_COLOR":               "1",
		"DO_NOT_TRACK":           "1",
		"NO_PROXY":               "127.0.0.1,localhost",
		"HTTPS_PROXY":            "",
		"HTTP_PROXY":             "",
		"ANTHROPIC_API_KEY":      "",
		"OPENAI_API_KEY":         "",
		"GEMINI_API_KEY":         "",
		"GOOGLE_API_KEY":         "",
		"GOOGLE_GEMINI_BASE_URL": "",
		"ANTHROPIC_BASE_URL":     "",
	}
	cfg := acp.Config{Name: a.Name, Command: bin, Args: a.Args, Env: env}
	switch a.Name {
	case Claude.Name:
		env["ANTHROPIC_BASE_URL"] = baseURL
		env["ANTHROPIC_API_KEY"] = Key
		env["DISABLE_TELEMETRY"] = "1"
		env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] = "1"
		env["DISABLE_AUTOUPDATER"] = "1"
		env["DISABLE_ERROR_REPORTING"] = "1"
		// A refused key fails the turn at once rather than after minutes
		// of retries.
		env["CLAUDE_CODE_MAX_RETRIES"] = "0"
		// Claude Code refuses to skip its permission prompts as root
		// unless it is told it runs in a sandbox.
		if os.Geteuid() == 0 {
			env["IS_SANDBOX"] = "1"
		}
	case Codex.Name:
		codexHome := filepath.Join(home, ".codex")
		env["CODEX_HOME"] = codexHome
		env["SCRIPTED_API_KEY"] = Key
		toml := fmt.Sprintf(`model = "gpt-scripted"
model_provider = "scripted"
approval_policy = "on-request"
sandbox_mode = "workspace-write"

[model_providers.scripted]
name = "scripted"
base_url = %q
wire_api = "responses"
env_key = "SCRIPTED_API_KEY"
request_max_retries = 0
stream_max_retries = 0
`, strings.TrimRight(baseURL, "/")+"/v1")
		if err := writeFile(filepath.Join(codexHome, "config.toml"), toml); err != nil {
			return cfg, err
		}
	case Gemini.Name:
		env["GOOGLE_GEMINI_BASE_URL"] = baseURL
		env["GEMINI_API_KEY"] = Key
		env["GEMINI_CLI_NO_RELAUNCH"] = "true"
		// It cannot create files through the client file system.
		cfg.DisableFileSystem = true
		settings := map[string]any{
			"telemetry": map[string]any{"enabled": false},
			"privacy":   map[string]any{"usageStatisticsEnabled": false},
			"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
			"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		}
		b, _ := json.MarshalIndent(settings, "", "  ")
		if err := writeFile(filepath.Join(home, ".gemini", "settings.json"), string(b)); err != nil {
			return cfg, err
		}
	default:
		return cfg, fmt.Errorf("unknown agent %q", a.Name)
	}
	return cfg, nil
}

func writeFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o600)
}

// versionIs reports whether a package.json holds the version.
func versionIs(packageJSON []byte, version string) bool {
	var p struct {
		Version string `json:"version"`
	}
	return json.Unmarshal(packageJSON, &p) == nil && p.Version == version
}
