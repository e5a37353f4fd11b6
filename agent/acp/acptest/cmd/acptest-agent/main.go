// Command acptest-agent runs the scripted ACP test agent of package acptest
// over stdin and stdout, so that it can be plugged into ahpd by hand:
//
//	go build -o /tmp/acptest-agent ./agent/acp/acptest/cmd/acptest-agent
//	go run ./cmd/ahpd --agent 'test=/tmp/acptest-agent'
package main

import (
	"fmt"
	"os"

	"github.com/ahp-go/ahp/agent/acp/acptest"
)

func main() {
	if err := acptest.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "acptest-agent:", err)
		os.Exit(1)
	}
}
