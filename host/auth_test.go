package host_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/ahp-go/ahp/agent"
	"github.com/ahp-go/ahp/agent/echo"
	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/protocol"
)

const guardedResource = "https://mcp.example.test/api"

// tokenAgent is the echo agent listing one protected resource, keeping the
// tokens it is given and refusing the token "bad".
type tokenAgent struct {
	agent.Backend
	mu  sync.Mutex
	got []agent.AuthRequest
}

func (a *tokenAgent) Info() protocol.AgentInfo {
	info := a.Backend.Info()
	info.ProtectedResources = []protocol.ProtectedResourceMetadata{{Resource: guardedResource}}
	return info
}

func (a *tokenAgent) Authenticate(_ context.Context, req agent.AuthRequest) error {
	if req.Token == "bad" {
		return errors.New("token rejected")
	}
	a.mu.Lock()
	a.got = append(a.got, req)
	a.mu.Unlock()
	return nil
}

func TestAuthenticate(t *testing.T) {
	ag := &tokenAgent{Backend: echo.New(nil)}
	withToken := startHost(t, &host.Options{Agents: []agent.Backend{ag}})
	plain := startHost(t, nil)
	expires := int64(3600)
	zero := int64(0)
	tests := []struct {
		name string
		th   *testHost
		p    *protocol.AuthenticateParams
		want protocol.ErrorCode // 0: accepted
	}{
		{"advertised", withToken, &protocol.AuthenticateParams{Resource: guardedResource, Token: "t1", ExpiresIn: &expires, Scopes: []string{"read"}}, 0},
		{"revoked", withToken, &protocol.AuthenticateParams{Resource: guardedResource, Token: ""}, 0},
		{"unknown resource", withToken, &protocol.AuthenticateParams{Resource: "https://elsewhere.test/", Token: "t"}, protocol.CodeInvalidParams},
		{"empty resource", withToken, &protocol.AuthenticateParams{Token: "t"}, protocol.CodeInvalidParams},
		{"zero expiresIn", withToken, &protocol.AuthenticateParams{Resource: guardedResource, Token: "t", ExpiresIn: &zero}, protocol.CodeInvalidParams},
		{"refused token", withToken, &protocol.AuthenticateParams{Resource: guardedResource, Token: "bad"}, protocol.CodeAuthRequired},
		{"nothing advertised", plain, &protocol.AuthenticateParams{Resource: guardedResource, Token: "t"}, protocol.CodeInvalidParams},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.th.dial(t, "auth")
			c.initializeAt("1.1.0")
			err := c.Call("authenticate", tt.p, nil)
			if got := rpcCode(err); got != tt.want || (tt.want == 0 && err != nil) {
				t.Fatalf("authenticate: %v, want code %d", err, tt.want)
			}
		})
	}
	// Params without a token are bad params, not a revocation.
	c := withToken.dial(t, "raw")
	c.initializeAt("1.1.0")
	if err := c.Call("authenticate", map[string]string{"channel": protocol.RootURI, "resource": guardedResource}, nil); rpcCode(err) != protocol.CodeInvalidParams {
		t.Errorf("without a token: %v", err)
	}
	ag.mu.Lock()
	defer ag.mu.Unlock()
	if len(ag.got) != 2 || ag.got[0].Token != "t1" || ag.got[0].ExpiresIn != 3600 || ag.got[0].ClientID != "auth" || ag.got[0].Scopes[0] != "read" || ag.got[1].Token != "" {
		t.Errorf("the agent got %+v", ag.got)
	}
}

// signInAgent is the echo agent needing sign-in until it is given a token:
// its resource is marked required until then.
type signInAgent struct {
	agent.Backend
	mu     sync.Mutex
	signed bool
}

func (a *signInAgent) Info() protocol.AgentInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	info := a.Backend.Info()
	info.ProtectedResources = []protocol.ProtectedResourceMetadata{
		{Resource: guardedResource, Required: protocol.Ptr(!a.signed)},
		{Resource: guardedResource + "/extra", Required: protocol.Ptr(false)},
	}
	return info
}

func (a *signInAgent) Authenticate(_ context.Context, req agent.AuthRequest) error {
	a.mu.Lock()
	a.signed = req.Token != ""
	a.mu.Unlock()
	return nil
}

// TestCreateSessionNeedsSignIn: a session on an agent that marks a
// resource required is refused with AuthRequired, the error's data listing
// the required resources; once the client has signed in, it is created.
func TestCreateSessionNeedsSignIn(t *testing.T) {
	th := startHost(t, &host.Options{Agents: []agent.Backend{&signInAgent{Backend: echo.New(nil)}}})
	c := th.dial(t, "signin")
	c.initializeAt("1.1.0")
	uri := protocol.SessionURI("signin")
	err := c.Call("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
	var pe *protocol.Error
	if !errors.As(err, &pe) || pe.Code != protocol.CodeAuthRequired {
		t.Fatalf("createSession before sign-in: %v, want AuthRequired", err)
	}
	var data protocol.AuthRequiredErrorData
	if err := protocol.Unmarshal(pe.Data, &data); err != nil {
		t.Fatalf("the error's data %s: %v", pe.Data, err)
	}
	if len(data.Resources) != 1 || data.Resources[0].Resource != guardedResource {
		t.Errorf("the error lists %+v, want the one required resource", data.Resources)
	}
	c.Must("authenticate", &protocol.AuthenticateParams{Resource: guardedResource, Token: "t"}, nil)
	c.Must("createSession", &protocol.CreateSessionParams{Channel: uri}, nil)
}
