package acp

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
)

// knownLogin is the login of one agent method that ahpd knows how to run
// without a loginCommands entry: when the agent's command is named agent,
// the program named login found beside it signs method in with args.
type knownLogin struct {
	agent, method, login string
	args                 []string
}

// knownLogins are the logins of the agents ahpd's documentation covers:
// Codex's ChatGPT login (the codex command installed with codex-acp) and
// Gemini CLI's Google login (gemini itself, run without --acp, asks for
// it).
var knownLogins = []knownLogin{
	{agent: "codex-acp", method: "chat-gpt", login: "codex", args: []string{"login"}},
	{agent: "gemini", method: "oauth-personal", login: "gemini"},
}

// withKnownLogins returns the agent's login commands with those of
// knownLogins that apply added, unless the configuration names a command
// for that method already. It looks the agent's command up in PATH, so it
// runs once, when the backend is made.
func withKnownLogins(c Config) map[string][]string {
	path, err := exec.LookPath(c.Command)
	if err != nil {
		return c.LoginCommands
	}
	out, cloned := c.LoginCommands, false
	for _, k := range knownLogins {
		if filepath.Base(path) != k.agent || len(out[k.method]) > 0 {
			continue
		}
		login := filepath.Join(filepath.Dir(path), k.login)
		if fi, err := os.Stat(login); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			continue
		}
		if !cloned {
			// The caller's map is left as it was.
			out, cloned = maps.Clone(out), true
			if out == nil {
				out = map[string][]string{}
			}
		}
		out[k.method] = append([]string{login}, k.args...)
	}
	return out
}
