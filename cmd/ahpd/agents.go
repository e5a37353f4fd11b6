package main

import (
	"flag"
	"log/slog"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
)

// agentConfig holds the agent backend settings. Only the built-in echo
// agent exists so far.
type agentConfig struct{}

func (c *agentConfig) defaults()                 {}
func (c *agentConfig) register(fs *flag.FlagSet) {}
func (c *agentConfig) validate() error           { return nil }

// backends returns the agent backends to offer, the first being the
// default for new sessions.
func (c *agentConfig) backends(log *slog.Logger) ([]agent.Backend, error) {
	return []agent.Backend{echo.New(nil)}, nil
}
