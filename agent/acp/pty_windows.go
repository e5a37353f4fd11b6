//go:build windows

package acp

// ptyTerminals says that ahpd's terminals, which need a PTY, do not run
// in its Windows build (docs/platforms.md): the handshake offers agents
// neither the terminal/* methods nor terminal logins, so they run commands
// themselves and sign in their own way.
const ptyTerminals = false
