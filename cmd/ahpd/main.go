// Command ahpd is the AHP host daemon.
//
// The host engine is not built yet: for now ahpd prints its version and the
// protocol versions it speaks, then exits.
package main

import (
	"fmt"
	"strings"

	"github.com/ahp-go/ahp/protocol"
)

// version is the ahpd release, set at build time with -ldflags.
var version = "devel"

func main() {
	fmt.Printf("ahpd %s (AHP %s; accepts %s)\n", version, protocol.ProtocolVersion, strings.Join(protocol.SupportedVersions(), ", "))
}
