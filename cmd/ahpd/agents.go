package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/acp"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
)

// probeTimeout bounds how long ahpd waits at start for an ACP agent to
// report itself.
const probeTimeout = 30 * time.Second

// agentConfig holds the agent backend settings: the ACP agents to offer
// (from the config file's "agents" list and the --agent flags), whether
// the built-in echo agent is offered too, and which agent new sessions get
// when they name none.
type agentConfig struct {
	Agents       []acp.Config `json:"agents"`
	DisableEcho  bool         `json:"disableEcho"`
	DefaultAgent string       `json:"defaultAgent"`
	// MCPServers are given to the sessions of every ACP agent, before
	// the agent's own (an agent's server replaces one of the same name).
	MCPServers []acp.MCPServer `json:"mcpServers"`

	flagAgents []acp.Config // --agent flags, merged into Agents by validate
}

func (c *agentConfig) defaults() {}

func (c *agentConfig) register(fs *flag.FlagSet) {
	fs.Func("agent", "ACP agent to offer, as NAME=COMMAND ARGS... (repeatable; replaces a config file agent of the same name)", func(v string) error {
		cfg, err := acp.ParseFlag(v)
		if err != nil {
			return err
		}
		c.flagAgents = append(c.flagAgents, cfg)
		return nil
	})
	fs.BoolVar(&c.DisableEcho, "no-echo", c.DisableEcho, "do not offer the built-in echo agent")
	fs.StringVar(&c.DefaultAgent, "default-agent", c.DefaultAgent, "provider of new sessions that name none (default: the first ACP agent, else echo)")
}

// validate merges the --agent flags into the list and checks it.
func (c *agentConfig) validate() error {
	for _, f := range c.flagAgents {
		if i := slices.IndexFunc(c.Agents, func(a acp.Config) bool { return a.Name == f.Name }); i >= 0 {
			c.Agents[i] = f
		} else {
			c.Agents = append(c.Agents, f)
		}
	}
	c.flagAgents = nil
	seen := map[string]bool{}
	if !c.DisableEcho {
		seen[echo.Provider] = true
	}
	for i := range c.MCPServers {
		if err := c.MCPServers[i].Validate(); err != nil {
			return err
		}
	}
	for i := range c.Agents {
		a := &c.Agents[i]
		a.MCPServers = acp.MergeMCPServers(c.MCPServers, a.MCPServers)
		if err := a.Validate(); err != nil {
			return err
		}
		// The provider names its sessions' URIs (<provider>:/<id>).
		if err := host.CheckProvider(a.Name); err != nil {
			return fmt.Errorf("agent %s: %w", a.Name, err)
		}
		if seen[a.Name] {
			return fmt.Errorf("two agents are named %q", a.Name)
		}
		seen[a.Name] = true
	}
	if len(seen) == 0 {
		return errors.New("no agents: declare one with --agent, or keep the echo agent")
	}
	if c.DefaultAgent != "" && !seen[c.DefaultAgent] {
		return fmt.Errorf("--default-agent %q is not one of the agents", c.DefaultAgent)
	}
	return nil
}

// backends returns the agent backends to offer, the first being the
// default for new sessions, and the ACP ones among them, to be probed.
func (c *agentConfig) backends(log *slog.Logger, creds *acp.Credentials) ([]agent.Backend, []*acp.Backend, error) {
	var out []agent.Backend
	acps := make([]*acp.Backend, len(c.Agents))
	for i, cfg := range c.Agents {
		b, err := acp.New(cfg, &acp.Options{Logger: log, ClientVersion: version, Credentials: creds})
		if err != nil {
			return nil, nil, err
		}
		acps[i] = b
	}
	for _, b := range acps {
		out = append(out, b)
	}
	if !c.DisableEcho {
		out = append(out, echo.New(nil))
	}
	def := c.DefaultAgent
	if def == "" {
		return out, acps, nil
	}
	i := slices.IndexFunc(out, func(b agent.Backend) bool { return b.Info().Provider == def })
	if i > 0 {
		b := out[i]
		out = slices.Delete(out, i, i+1)
		out = slices.Insert(out, 0, b)
	}
	return out, acps, nil
}

// probeAgents probes the ACP agents in parallel, each for at most
// probeTimeout, calling done after each probe, until ctx ends. It returns
// once every probe has ended. ahpd listens meanwhile: an agent is listed
// from the start and its entry is updated when its probe finishes, and its
// sessions can be created before (each starts its own process).
func probeAgents(ctx context.Context, acps []*acp.Backend, log *slog.Logger, done func()) {
	var wg sync.WaitGroup
	for _, b := range acps {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, probeTimeout)
			defer cancel()
			start := time.Now()
			err := b.Probe(ctx)
			if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
				return // ahpd is stopping
			}
			done()
			if err != nil {
				log.Warn("ACP agent did not start; its sessions will fail until it does", "agent", b.Config().Name, "err", err)
				return
			}
			info := b.Info()
			switch st, why := b.State(); st {
			case acp.StateNeedsSignIn:
				log.Warn("ACP agent needs sign-in; sign it in from a client (the web page's new-session dialog, or ahp login)", "agent", info.Provider,
					"err", why, "authMethods", b.AuthMethods())
				return
			case acp.StateFailed:
				log.Warn("ACP agent started but cannot open a session; its sessions will fail until it can", "agent", info.Provider,
					"err", why, "authMethods", b.AuthMethods())
				return
			}
			log.Info("ACP agent ready", "agent", info.Provider, "name", info.DisplayName, "models", len(info.Models),
				"authMethods", b.AuthMethods(), "took", time.Since(start).Round(time.Millisecond))
		})
	}
	wg.Wait()
}
