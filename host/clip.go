package host

import "github.com/ahp-go/ahp/internal/logbound"

// maxLoggedValue bounds how much of a value a client controls (an id, a
// header, a method name) goes into one log line or error message.
const maxLoggedValue = logbound.MaxValue

// clip shortens s to at most n bytes, saying how long it was.
func clip(s string, n int) string { return logbound.Clip(s, n) }
