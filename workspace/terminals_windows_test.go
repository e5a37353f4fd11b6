//go:build windows

package workspace_test

import (
	"strings"
	"testing"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
)

// Without a PTY, createTerminal is not served, says why, and opens no
// channel.
func TestCreateTerminalWithoutPTY(t *testing.T) {
	srv := startHost(t, nil, &workspace.Options{Roots: []string{t.TempDir()}})
	c := srv.Dial(t, "c1")
	initialize(t, c)
	uri := "ahp-terminal:/t1"
	pe := rpcCode(t, c.Call("createTerminal", &protocol.CreateTerminalParams{Channel: uri, Claim: &protocol.TerminalClientClaim{ClientID: "c1"}}, nil))
	if pe.Code != protocol.CodeMethodNotFound || !strings.Contains(pe.Message, "pseudo-terminal") {
		t.Fatalf("createTerminal answered %d %q, want -32601 naming the missing pseudo-terminal", pe.Code, pe.Message)
	}
	if err := c.Call("subscribe", &protocol.SubscribeParams{Channel: uri}, nil); err == nil {
		t.Fatal("the terminal's channel exists")
	}
}
