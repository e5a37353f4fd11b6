package acp

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"

	acpsdk "github.com/coder/acp-go-sdk"
)

// MCP server transports.
const (
	// MCPStdio runs the server as a command; every ACP agent supports it.
	MCPStdio = "stdio"
	// MCPHTTP reaches the server at a URL (MCP's streamable HTTP); only
	// agents that advertise mcpCapabilities.http take it.
	MCPHTTP = "http"
	// MCPSSE reaches the server at a URL over the older HTTP+SSE
	// transport; only agents that advertise mcpCapabilities.sse take it.
	MCPSSE = "sse"
)

// MCPServer is an MCP server given to the agent's sessions (ACP
// session/new's mcpServers). Its JSON form is an entry of the
// "mcpServers" list of ahpd's config file, at the top level (for every
// agent) or in an agent's entry.
//
// Values of Env and Headers, and the URL, may name variables of ahpd's
// environment as $VAR or ${VAR}, so that the file need not hold a
// secret. ahpd passes them to the agent and never logs them, nor shows
// them to clients.
type MCPServer struct {
	// Name identifies the server to the agent and to clients (the
	// session's customizations). Letters, digits, '.', '_' and '-'.
	Name string `json:"name"`
	// Type is MCPStdio, MCPHTTP or MCPSSE. Empty means MCPStdio when
	// Command is set and MCPHTTP when URL is.
	Type string `json:"type,omitempty"`
	// Command and Args run a stdio server; Env adds to its environment.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	// URL and Headers reach an HTTP or SSE server.
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
	// Disabled leaves the server out of new sessions until a client
	// turns it on (session/customizationToggled).
	Disabled bool `json:"disabled,omitempty"`
}

// transport returns the server's transport, resolving an empty Type.
func (m *MCPServer) transport() string {
	if m.Type != "" {
		return m.Type
	}
	if m.URL != "" {
		return MCPHTTP
	}
	return MCPStdio
}

// Validate reports what is wrong with the server's declaration.
func (m *MCPServer) Validate() error {
	if !namePattern.MatchString(m.Name) {
		return fmt.Errorf("MCP server %q: the name must be letters, digits, '.', '_' or '-'", m.Name)
	}
	switch m.transport() {
	case MCPStdio:
		if m.Command == "" {
			return fmt.Errorf("MCP server %s: a stdio server needs a command", m.Name)
		}
		if m.URL != "" || len(m.Headers) > 0 {
			return fmt.Errorf("MCP server %s: a stdio server takes no url or headers", m.Name)
		}
		for k := range m.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return fmt.Errorf("MCP server %s: bad environment variable name %q", m.Name, k)
			}
		}
	case MCPHTTP, MCPSSE:
		if m.URL == "" {
			return fmt.Errorf("MCP server %s: an %s server needs a url", m.Name, m.transport())
		}
		if m.Command != "" || len(m.Args) > 0 || len(m.Env) > 0 {
			return fmt.Errorf("MCP server %s: an %s server takes no command, args or env", m.Name, m.transport())
		}
		if !strings.Contains(m.URL, "$") {
			if u, err := url.Parse(m.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				// The URL itself is not quoted: it may carry a token.
				return fmt.Errorf("MCP server %s: the url must be an absolute http or https URL", m.Name)
			}
		}
		for k := range m.Headers {
			if k == "" || strings.ContainsAny(k, ":\r\n\x00 ") {
				return fmt.Errorf("MCP server %s: bad header name %q", m.Name, k)
			}
		}
	default:
		return fmt.Errorf("MCP server %s: unknown type %q (want %s, %s or %s)", m.Name, m.Type, MCPStdio, MCPHTTP, MCPSSE)
	}
	return nil
}

// MergeMCPServers returns the servers of every agent followed by the
// agent's own, an agent's server replacing a shared one of the same name.
func MergeMCPServers(shared, own []MCPServer) []MCPServer {
	out := make([]MCPServer, 0, len(shared)+len(own))
	for _, m := range shared {
		if !slices.ContainsFunc(own, func(o MCPServer) bool { return o.Name == m.Name }) {
			out = append(out, m)
		}
	}
	return append(out, own...)
}

// validateMCPServers checks a list of servers: each valid, names unique,
// none named like the server ahpd serves itself.
func validateMCPServers(agentName string, list []MCPServer) error {
	seen := map[string]bool{}
	for i := range list {
		m := &list[i]
		if err := m.Validate(); err != nil {
			return fmt.Errorf("agent %s: %w", agentName, err)
		}
		if m.Name == ClientToolsServer {
			return fmt.Errorf("agent %s: MCP server name %q is ahpd's own (the clients' tools)", agentName, m.Name)
		}
		if seen[m.Name] {
			return fmt.Errorf("agent %s: two MCP servers are named %q", agentName, m.Name)
		}
		seen[m.Name] = true
	}
	return nil
}

// expander expands $VAR and ${VAR} from an environment list. The list is
// read on the first expansion: most sessions have no server to expand.
func expander(environ []string) func(string) string {
	var lookup map[string]string
	return func(s string) string {
		if lookup == nil {
			lookup = make(map[string]string, len(environ))
			for _, kv := range environ {
				if k, v, ok := strings.Cut(kv, "="); ok {
					lookup[k] = v
				}
			}
		}
		return os.Expand(s, func(name string) string { return lookup[name] })
	}
}

// acpServer returns the server as ACP's session/new takes it, its values
// expanded by expand.
func (m *MCPServer) acpServer(expand func(string) string) acpsdk.McpServer {
	switch m.transport() {
	case MCPHTTP, MCPSSE:
		headers := make([]acpsdk.HttpHeader, 0, len(m.Headers))
		for _, k := range sortedKeys(m.Headers) {
			headers = append(headers, acpsdk.HttpHeader{Name: k, Value: expand(m.Headers[k])})
		}
		if m.transport() == MCPSSE {
			return acpsdk.McpServer{Sse: &acpsdk.McpServerSseInline{Name: m.Name, Type: "sse", Url: expand(m.URL), Headers: headers}}
		}
		return acpsdk.McpServer{Http: &acpsdk.McpServerHttpInline{Name: m.Name, Type: "http", Url: expand(m.URL), Headers: headers}}
	}
	env := make([]acpsdk.EnvVariable, 0, len(m.Env))
	for _, k := range sortedKeys(m.Env) {
		env = append(env, acpsdk.EnvVariable{Name: k, Value: expand(m.Env[k])})
	}
	args := append([]string{}, m.Args...)
	return acpsdk.McpServer{Stdio: &acpsdk.McpServerStdio{Name: m.Name, Command: m.Command, Args: args, Env: env}}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// supported reports whether an agent with caps takes the server's
// transport, and if not, why.
func (m *MCPServer) supported(caps acpsdk.McpCapabilities) string {
	switch m.transport() {
	case MCPHTTP:
		if !caps.Http {
			return "the agent does not take HTTP MCP servers (no mcpCapabilities.http)"
		}
	case MCPSSE:
		if !caps.Sse {
			return "the agent does not take SSE MCP servers (no mcpCapabilities.sse)"
		}
	}
	return ""
}
