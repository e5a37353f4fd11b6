package client_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/ahp-go/ahp/client"
	"github.com/ahp-go/ahp/protocol"
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

// TestErrorDataStaysJSON: the details of an error encode as the JSON they
// are, with either JSON library, and decode into the documented type.
func TestErrorDataStaysJSON(t *testing.T) {
	e := &client.Error{Method: "initialize", Code: protocol.CodeUnsupportedProtocolVersion, Data: json.RawMessage(`{"supportedVersions":["1.0.0"]}`)}
	want := `"Data":{"supportedVersions":["1.0.0"]}`
	for name, marshal := range map[string]func(any) ([]byte, error){"encoding/json": json.Marshal, "protocol": protocol.Marshal} {
		b, err := marshal(e)
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%s: %s, %v; want it to hold %s", name, b, err, want)
		}
	}
	var d protocol.UnsupportedProtocolVersionErrorData
	if err := e.DecodeData(&d); err != nil || len(d.SupportedVersions) != 1 {
		t.Fatalf("DecodeData: %+v, %v", d, err)
	}
	if !errors.Is(e, client.ErrUnsupportedProtocolVersion) {
		t.Fatal("the error does not match its code")
	}
}
