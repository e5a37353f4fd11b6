package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/workspace"
	"github.com/ahp-go/ahp/workspace/files"
)

// workspaceConfig holds what clients may reach on this machine's files.
type workspaceConfig struct {
	// Roots are directories clients may read and write. When there are
	// any, the working directories of sessions, chats and terminals are
	// confined to them (workspace/confine.go).
	Roots []string `json:"roots"`
	// RequestableRoots are directories a client reaches after asking with
	// resourceRequest.
	RequestableRoots []string `json:"requestableRoots"`
	// DefaultDirectory is offered to clients in initialize; empty means
	// the first root, if any.
	DefaultDirectory string `json:"defaultDirectory"`
	// MaxReadBytes bounds one resourceRead.
	MaxReadBytes int64 `json:"maxReadBytes"`
	// TerminalShell is the command terminals run (split on spaces); empty
	// means $SHELL.
	TerminalShell string `json:"terminalShell"`
	// TerminalScrollback is how many bytes of output a terminal keeps.
	TerminalScrollback int `json:"terminalScrollback"`

	roots, requestable stringList
}

func (c *workspaceConfig) defaults() {
	c.MaxReadBytes = files.DefaultMaxReadBytes
	c.TerminalScrollback = workspace.DefaultScrollback
}

func (c *workspaceConfig) register(fs *flag.FlagSet) {
	fs.Var(&c.roots, "root", "directory clients may read and write; when given, sessions, chats and terminals may only work inside the roots (repeatable)")
	fs.Var(&c.requestable, "requestable-root", "directory clients may be granted with resourceRequest (repeatable)")
	fs.StringVar(&c.DefaultDirectory, "default-directory", c.DefaultDirectory, "directory offered to clients to start browsing (default the first --root)")
	fs.Int64Var(&c.MaxReadBytes, "max-read-bytes", c.MaxReadBytes, "largest resourceRead; bigger files are read in ranges")
	fs.StringVar(&c.TerminalShell, "terminal-shell", c.TerminalShell, "command terminals run (default $SHELL; bash gets shell integration)")
	fs.IntVar(&c.TerminalScrollback, "terminal-scrollback", c.TerminalScrollback, "bytes of output each terminal keeps for late subscribers")
}

// finish merges repeated flags over the config file's lists and checks
// the directories.
func (c *workspaceConfig) finish() error {
	if len(c.roots) > 0 {
		c.Roots = c.roots
	}
	if len(c.requestable) > 0 {
		c.RequestableRoots = c.requestable
	}
	if c.MaxReadBytes <= 0 {
		return fmt.Errorf("--max-read-bytes must be positive")
	}
	if c.TerminalScrollback <= 0 {
		return fmt.Errorf("--terminal-scrollback must be positive")
	}
	for _, list := range []*[]string{&c.Roots, &c.RequestableRoots} {
		for i, d := range *list {
			abs, err := filepath.Abs(d)
			if err != nil {
				return err
			}
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
			(*list)[i] = abs
		}
	}
	if c.DefaultDirectory == "" && len(c.Roots) > 0 {
		c.DefaultDirectory = c.Roots[0]
	}
	if c.DefaultDirectory != "" {
		abs, err := filepath.Abs(c.DefaultDirectory)
		if err != nil {
			return err
		}
		c.DefaultDirectory = abs
	}
	return nil
}

// apply puts the workspace into the host's options.
func (c *workspaceConfig) apply(o *host.Options, log *slog.Logger) {
	if c.DefaultDirectory != "" {
		o.DefaultDirectory = files.URIOf(c.DefaultDirectory)
	}
	o.Workspace = workspace.New(&workspace.Options{
		Roots:        c.Roots,
		Requestable:  c.RequestableRoots,
		MaxReadBytes: c.MaxReadBytes,
		Shell:        strings.Fields(c.TerminalShell),
		Scrollback:   c.TerminalScrollback,
		Logger:       log,
	})
}
