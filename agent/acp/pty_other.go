//go:build !windows

package acp

// ptyTerminals says that ahpd's terminals, which need a PTY, run here: the
// handshake offers agents the terminal/* methods and terminal logins.
const ptyTerminals = true
