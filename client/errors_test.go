package client_test

import (
	"testing"

	"github.com/ahp-go/ahp/client"
)

// TestErrorNamesMethodOnce: a host message that starts with the method is
// not repeated.
func TestErrorNamesMethodOnce(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{`createSession: no agent provider "nope"`, `ahp: createSession: no agent provider "nope" (code -32002)`},
		{`no agent provider "nope"`, `ahp: createSession: no agent provider "nope" (code -32002)`},
	} {
		e := &client.Error{Method: "createSession", Code: -32002, Message: tc.msg}
		if got := e.Error(); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.msg, got, tc.want)
		}
		if got := e.Text(); got != `no agent provider "nope"` {
			t.Errorf("%q: text %q", tc.msg, got)
		}
	}
}
