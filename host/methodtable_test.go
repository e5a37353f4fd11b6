package host_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/workspace"
)

// notServed lists the client methods ahpd answers with -32601 on purpose,
// and why. Every other client method of every version is served by
// exactly one entry of the method table, the host's or the workspace's.
var notServed = map[string]string{
	"createTcpConnection":              "ahpd opens no TCP connections for clients",
	"listAutomationTriggerDefinitions": "automations are not served yet",
	"runAutomation":                    "automations are not served yet",
	"fetchAutomationRuns":              "automations are not served yet",
	"channel/frame":                    "no byte-stream channels (a notification: dropped)",
	"channel/credit":                   "no byte-stream channels (a notification: dropped)",
	"channel/reset":                    "no byte-stream channels (a notification: dropped)",
	"tcp/data":                         "no TCP connections (a notification: dropped)",
	"tcp/eof":                          "no TCP connections (a notification: dropped)",
}

// TestMethodTable walks the protocol's method table for every version
// the host speaks: a client method is served by one entry of the host's
// table or is listed in notServed, and a request for it answers -32601
// when it is not served or not part of the connection's version. A served
// request with a member of the wrong type answers -32602 naming the
// member, whichever entry serves it: the table decodes for all of them.
func TestMethodTable(t *testing.T) {
	th := startPipeHost(t, &host.Options{Workspace: workspace.New(nil)})
	for _, v := range protocol.SupportedVersions() {
		t.Run(v, func(t *testing.T) {
			c := th.dial(t, "table-"+v)
			var res protocol.InitializeResult
			c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: []string{v}, ClientID: c.ID}, &res)
			if res.ProtocolVersion != v {
				t.Fatalf("negotiated %s, want %s", res.ProtocolVersion, v)
			}
			for _, m := range protocol.Methods() {
				if !m.FromClient {
					continue
				}
				by := host.ServedBy(th.h, m.Name)
				_, deliberate := notServed[m.Name]
				switch {
				case deliberate && by != "":
					t.Errorf("%s is listed as not served, but the %s serves it", m.Name, by)
				case !deliberate && by == "":
					t.Errorf("%s is served by no entry of the method table and not listed as not served", m.Name)
				}
				known := protocol.MethodKnownToVersion(m.Name, v)
				if m.Notification {
					if !known || by == "" {
						// Dropped: nothing can answer a notification.
						if err := c.RPC.Notify(t.Context(), m.Name, jsontext.Value(`{"channel":"ahp-root://"}`)); err != nil {
							t.Fatalf("%s: %v", m.Name, err)
						}
					}
					continue
				}
				err := c.Call(m.Name, jsontext.Value(`{"channel":5}`), nil)
				switch {
				case !known || by == "":
					if rpcCode(err) != protocol.CodeMethodNotFound {
						t.Errorf("%s (known to %s: %v, served by %q): got %v, want -32601", m.Name, v, known, by, err)
					}
				default:
					prefix := m.Name + ": member channel"
					if rpcCode(err) != protocol.CodeInvalidParams || !strings.Contains(err.Error(), prefix) {
						t.Errorf("%s, served by the %s: got %v, want -32602 %q", m.Name, by, err, prefix)
					}
				}
			}
			// The connection outlived every refusal.
			c.Must("ping", nil, nil)
		})
	}
	// Before initialize every method but initialize, reconnect and ping is
	// refused with -32600, the workspace's as the host's.
	early := th.dial(t, "early")
	for _, m := range protocol.Methods() {
		switch {
		case !m.FromClient || m.Notification || host.ServedBy(th.h, m.Name) == "":
		case m.Name == "initialize" || m.Name == "reconnect" || m.Name == "ping":
		default:
			if err := early.Call(m.Name, jsontext.Value(`{"channel":5}`), nil); rpcCode(err) != protocol.CodeInvalidRequest {
				t.Errorf("%s before initialize: got %v, want -32600", m.Name, err)
			}
		}
	}
}

// TestLegacyClientNewerMethods: a 0.8.0 client calling a method of 1.x
// alone gets -32601, whichever entry would serve it for a newer client.
func TestLegacyClientNewerMethods(t *testing.T) {
	th := startPipeHost(t, &host.Options{Workspace: workspace.New(nil)})
	c := th.dial(t, "old")
	c.initialize()
	for _, method := range []string{"moveChat", "createTcpConnection", "runAutomation"} {
		err := c.Call(method, jsontext.Value(`{"channel":"ahp-session:/x","chat":"ahp-chat:/y","target":"ahp-session:/z"}`), nil)
		if rpcCode(err) != protocol.CodeMethodNotFound || !strings.Contains(err.Error(), "not part of protocol version 0.8.0") {
			t.Errorf("%s from a 0.8.0 client: got %v, want -32601", method, err)
		}
	}
}

// TestParamsErrorsAlike: the host's methods and the workspace's answer bad
// params alike, from the one decoding step of the method table.
func TestParamsErrorsAlike(t *testing.T) {
	th := startPipeHost(t, &host.Options{Workspace: workspace.New(nil)})
	c := th.dial(t, "params")
	c.initialize()
	for _, tc := range []struct {
		method string
		params jsontext.Value // nil: none
		want   string
	}{
		{"createChat", nil, "createChat: params are required"},
		{"resourceRead", nil, "resourceRead: params are required"},
		{"createTerminal", nil, "createTerminal: params are required"},
		{"createChat", jsontext.Value(`{"channel":"ahp-root://","chat":null}`), "createChat: member chat"},
		{"resourceRead", jsontext.Value(`{"channel":"ahp-root://","uri":null}`), "resourceRead: member uri"},
		{"resourceRead", jsontext.Value(`{"channel":"ahp-root://","uri":"file:///x","encoding":"utf-9"}`), "resourceRead: member encoding"},
		{"createResourceWatch", jsontext.Value(`{"channel":"ahp-root://","uri":7}`), "createResourceWatch: member uri"},
		{"resourceList", jsontext.Value(`[]`), "resourceList: "},
	} {
		var params any
		if tc.params != nil {
			params = tc.params
		}
		err := c.Call(tc.method, params, nil)
		if rpcCode(err) != protocol.CodeInvalidParams || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got %v, want -32602 %q", tc.method, tc.params, err, tc.want)
		}
	}
}

// fakeWorkspace serves the methods it is given.
type fakeWorkspace struct{ methods []host.Method }

func (w fakeWorkspace) Methods() []host.Method { return w.methods }
func (fakeWorkspace) Disconnected(host.Client) {}
func (fakeWorkspace) Close() error             { return nil }

func noop[P any](context.Context, host.Client, *P) (*struct{}, error) { return nil, nil }

// TestWorkspaceMethodsChecked: New refuses a workspace entry for a method
// clients may not send, with another params type than the protocol's, or
// for a method another entry serves.
func TestWorkspaceMethodsChecked(t *testing.T) {
	for _, tc := range []struct {
		name    string
		methods []host.Method
		want    string
	}{
		{"unknown", []host.Method{host.Handle("frobnicate", noop[protocol.PingParams])}, "frobnicate"},
		{"server only", []host.Method{host.Handle("root/sessionAdded", noop[protocol.SessionAddedParams])}, "root/sessionAdded"},
		{"params type", []host.Method{host.Handle("resourceRead", noop[protocol.ResourceWriteParams])}, "resourceRead"},
		{"served by the host", []host.Method{host.Handle("createChat", noop[protocol.CreateChatParams])}, "createChat is served twice"},
		{"listed twice", []host.Method{
			host.Handle("createTcpConnection", noop[protocol.CreateTCPConnectionParams]),
			host.Handle("createTcpConnection", noop[protocol.CreateTCPConnectionParams]),
		}, "createTcpConnection is served twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := host.New(&host.Options{Workspace: func(host.WorkspaceHost) (host.Workspace, error) {
				return fakeWorkspace{tc.methods}, nil
			}})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error naming %q", err, tc.want)
			}
		})
	}
}

// TestWorkspaceHandlerArguments: an entry gets the calling client, and a
// strict one the required members the params lacked as its argument.
func TestWorkspaceHandlerArguments(t *testing.T) {
	strict := host.HandleStrict("createTcpConnection", func(_ context.Context, c host.Client, p *protocol.CreateTCPConnectionParams, missing *protocol.MissingError) (*struct{}, error) {
		if missing != nil {
			return nil, &protocol.Error{Code: protocol.CodeInvalidParams, Message: fmt.Sprintf("%s: %v", c.ID(), missing)}
		}
		return nil, &protocol.Error{Code: protocol.CodeNotFound, Message: fmt.Sprintf("%s asked for %s:%d", c.ID(), p.Host, p.Port)}
	})
	if strict.Name() != "createTcpConnection" {
		t.Fatalf("Name() = %q", strict.Name())
	}
	th := startPipeHost(t, &host.Options{Workspace: func(host.WorkspaceHost) (host.Workspace, error) {
		return fakeWorkspace{[]host.Method{strict}}, nil
	}})
	c := th.dial(t, "strict")
	c.Must("initialize", &protocol.InitializeParams{ProtocolVersions: protocol.SupportedVersions(), ClientID: c.ID}, nil)
	for _, tc := range []struct {
		params string
		code   protocol.ErrorCode
		want   string
	}{
		{`{"channel":"ahp-root://","host":"example.org"}`, protocol.CodeInvalidParams, `strict: protocol: missing required member "port"`},
		{`{"channel":"ahp-root://"}`, protocol.CodeInvalidParams, `strict: protocol: missing required members "host", "port"`},
		{`{"channel":"ahp-root://","host":null,"port":80}`, protocol.CodeInvalidParams, `strict: protocol: "host"`},
		{`{"channel":"ahp-root://","host":"example.org","port":80}`, protocol.CodeNotFound, "strict asked for example.org:80"},
		{`{"channel":"ahp-root://","host":1,"port":80}`, protocol.CodeInvalidParams, "createTcpConnection: member host"},
	} {
		err := c.Call("createTcpConnection", jsontext.Value(tc.params), nil)
		var pe *protocol.Error
		if !errors.As(err, &pe) || pe.Code != tc.code || !strings.Contains(pe.Message, tc.want) {
			t.Errorf("%s: got %v, want %d %q", tc.params, err, tc.code, tc.want)
		}
	}
	// Before initialize, the table refuses it like every method.
	early := th.dial(t, "early")
	if err := early.Call("createTcpConnection", jsontext.Value(`{"channel":"ahp-root://","host":"h","port":1}`), nil); rpcCode(err) != protocol.CodeInvalidRequest {
		t.Errorf("before initialize: got %v, want -32600", err)
	}
}
