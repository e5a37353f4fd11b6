package host

import (
	"strconv"
	"unicode/utf8"
)

// maxLoggedValue bounds how much of a value a client controls (an id, a
// header, a method name) goes into one log line or error message.
const maxLoggedValue = 128

// clip shortens s to at most n bytes, cutting on a rune boundary and
// saying how long it was.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…(" + strconv.Itoa(len(s)) + " bytes)"
}

// quoteClipped quotes a clipped value for a message.
func quoteClipped(s string) string {
	return strconv.Quote(clip(s, maxLoggedValue))
}
