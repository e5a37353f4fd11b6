package acp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// Config describes one ACP agent: the command that runs it and how it is
// listed to clients. Its JSON form is an entry of the "agents" list in
// ahpd's config file.
type Config struct {
	// Name is the provider id clients pass to createSession and see in the
	// root state's agents. Letters, digits, '.', '_' and '-'.
	Name string `json:"name"`
	// DisplayName is the name shown to users. Empty means the title or name
	// the agent reports at initialize, then Name.
	DisplayName string `json:"displayName,omitempty"`
	// Description is shown next to the agent. Empty means one built from
	// what the agent reports at initialize.
	Description string `json:"description,omitempty"`
	// Command is the program to run, found on PATH when it has no slash.
	Command string `json:"command"`
	// Args are its arguments.
	Args []string `json:"args,omitempty"`
	// Env adds variables to the environment ahpd runs in (or replaces
	// them). $VAR and ${VAR} in a value expand from ahpd's environment, so
	// that a config file can name a secret without holding it.
	Env map[string]string `json:"env,omitempty"`
	// WorkingDirectory chooses the directory each session's agent works
	// in.
	WorkingDirectory WorkingDirectory `json:"workingDirectory,omitzero"`
	// AuthMethod, when set, is the id of an authentication method the
	// agent advertises; it is sent with ACP authenticate after initialize
	// (some agents want it even when the API key is in the environment).
	AuthMethod string `json:"authMethod,omitempty"`
	// LoginCommands gives, by method id, the command (and arguments) that
	// signs in with one of the agent's "agent" authentication methods,
	// such as ["codex", "login"]: a client can then run it in a terminal
	// (see docs/agents.md). Terminal methods need none.
	LoginCommands map[string][]string `json:"loginCommands,omitempty"`
	// CancelTimeout is how long the agent may take to end a cancelled
	// turn before it is restarted. Zero means the backend's default.
	CancelTimeout Duration `json:"cancelTimeout,omitzero"`
	// DisableFileSystem stops offering the agent ACP's client file system
	// (fs/read_text_file and fs/write_text_file): the agent reads and
	// writes the working directory itself, and its writes no longer show
	// as file edits of the turn. Gemini CLI needs it to create files: it
	// takes the host's "resource not found" answer for a file it is about
	// to create as a failure.
	DisableFileSystem bool `json:"disableFileSystem,omitempty"`
	// MCPServers are given to each of the agent's sessions (see
	// MCPServer); ahpd's config adds the servers declared for every agent.
	MCPServers []MCPServer `json:"mcpServers,omitempty"`
	// ClientToolTimeout is how long a client may take to run one of its
	// tools the agent called (see ClientToolsServer) before the call
	// fails. Zero means DefaultClientToolTimeout.
	ClientToolTimeout Duration `json:"clientToolTimeout,omitzero"`

	// secrets are the keys clients signed the agent in with (set by
	// Backend.launch): masked in its stderr.
	secrets []string
}

// Working directory policies.
const (
	// PolicySession runs the agent in the session's working directory;
	// a session created without one uses WorkingDirectory.Directory, or
	// ahpd's own working directory when that is empty too.
	PolicySession = "session"
	// PolicyRequire runs the agent in the session's working directory and
	// refuses sessions created without one.
	PolicyRequire = "require"
	// PolicyFixed runs every session in WorkingDirectory.Directory,
	// whatever the session asked for.
	PolicyFixed = "fixed"
)

// WorkingDirectory is the working directory policy of an agent. The
// directory chosen is the cwd of the agent process and of its ACP session,
// and the only directory the host's file system methods serve.
type WorkingDirectory struct {
	// Policy is PolicySession (the default when empty), PolicyRequire or
	// PolicyFixed.
	Policy string `json:"policy,omitempty"`
	// Directory is an absolute path: the fallback of PolicySession, the
	// directory of PolicyFixed.
	Directory string `json:"directory,omitempty"`
}

// Duration is a time.Duration written in JSON as a string such as "10s".
type Duration time.Duration

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON reads a string such as "1m30s".
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"10s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate reports what is wrong with the configuration, naming the agent.
func (c *Config) Validate() error {
	if !namePattern.MatchString(c.Name) {
		return fmt.Errorf("agent %q: the name must be letters, digits, '.', '_' or '-'", c.Name)
	}
	if c.Command == "" {
		return fmt.Errorf("agent %s: no command", c.Name)
	}
	for k := range c.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("agent %s: bad environment variable name %q", c.Name, k)
		}
	}
	wd := c.WorkingDirectory
	switch wd.Policy {
	case "", PolicySession, PolicyRequire:
	case PolicyFixed:
		if wd.Directory == "" {
			return fmt.Errorf("agent %s: working directory policy %q needs a directory", c.Name, wd.Policy)
		}
	default:
		return fmt.Errorf("agent %s: unknown working directory policy %q (want %s, %s or %s)", c.Name, wd.Policy, PolicySession, PolicyRequire, PolicyFixed)
	}
	if wd.Directory != "" && !filepath.IsAbs(wd.Directory) {
		return fmt.Errorf("agent %s: working directory %q is not an absolute path", c.Name, wd.Directory)
	}
	for id, cmd := range c.LoginCommands {
		if len(cmd) == 0 || cmd[0] == "" {
			return fmt.Errorf("agent %s: login command of %q is empty", c.Name, id)
		}
	}
	if c.CancelTimeout < 0 {
		return fmt.Errorf("agent %s: negative cancel timeout", c.Name)
	}
	if c.ClientToolTimeout < 0 {
		return fmt.Errorf("agent %s: negative client tool timeout", c.Name)
	}
	return validateMCPServers(c.Name, c.MCPServers)
}

// CheckCommand reports an error when the agent's command cannot be run:
// it is not on PATH (or, with a slash, not at its path) or not executable.
// Validate does not check this, since the command may be installed after
// the configuration is written; ahpd --check does.
func (c *Config) CheckCommand() error {
	if _, err := exec.LookPath(c.Command); err != nil {
		return fmt.Errorf("agent %s: %w", c.Name, err)
	}
	return nil
}

// ParseFlag parses the value of ahpd's --agent flag, NAME=COMMAND ARGS...,
// into a Config. The command line is split on spaces; single and double
// quotes group words and a backslash escapes the next character, as in a
// shell (without expansions).
func ParseFlag(v string) (Config, error) {
	name, cmdline, ok := strings.Cut(v, "=")
	if !ok {
		return Config{}, fmt.Errorf("--agent %q: want NAME=COMMAND [ARGS]", v)
	}
	words, err := splitCommandLine(cmdline)
	if err != nil {
		return Config{}, fmt.Errorf("--agent %s: %w", name, err)
	}
	if len(words) == 0 {
		return Config{}, fmt.Errorf("--agent %s: no command", name)
	}
	c := Config{Name: strings.TrimSpace(name), Command: words[0], Args: words[1:]}
	return c, c.Validate()
}

// splitCommandLine splits s into words like a POSIX shell would, without
// expansions.
func splitCommandLine(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range s {
		switch {
		case escaped:
			cur.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				escaped = true
			default:
				cur.WriteRune(r)
			}
		case r == '\\':
			escaped, inWord = true, true
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unterminated quote or escape in the command line")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// environ returns the agent's environment: base, then Env with its values
// expanded from base.
func (c *Config) environ(base []string) []string {
	lookup := map[string]string{}
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			lookup[k] = v
		}
	}
	env := make([]string, 0, len(base)+len(c.Env))
	for _, kv := range base {
		k, _, _ := strings.Cut(kv, "=")
		if _, over := c.Env[k]; !over {
			env = append(env, kv)
		}
	}
	for k, v := range c.Env {
		env = append(env, k+"="+os.Expand(v, func(name string) string { return lookup[name] }))
	}
	return env
}
