package client

import (
	"context"
	"fmt"

	"github.com/ahp-go/ahp/protocol"
)

// The commands a client sends to the host, one method each. Methods on the
// root channel accept nil params; the others need params naming their
// channel. A failure the host reports is an *Error.

// call sends a request and decodes its result. The method table says
// whether method is a request a client may send and what its result is;
// a mismatch is a bug in this package, which TestEveryCommandHasAMethod
// guards against.
func call[R any](ctx context.Context, c *Client, method string, params any) (*R, error) {
	m, err := clientRequest(method)
	if err != nil {
		return nil, err
	}
	l, err := c.current(ctx, true)
	if err != nil {
		return nil, err
	}
	v := c.shapes()
	params = v.Params(params)
	if m.Result == "" {
		return nil, wrapCallError(method, upError(v, l.rpc.Call(ctx, method, params, nil)))
	}
	r := new(R)
	if err := l.rpc.Call(ctx, method, params, r); err != nil {
		return nil, wrapCallError(method, upError(v, err))
	}
	if res, ok := any(r).(*protocol.ListSessionsResult); ok {
		res.Items = v.UpSummaries(res.Items)
	}
	return r, nil
}

// callNoResult sends a request whose result is null.
func callNoResult(ctx context.Context, c *Client, method string, params any) error {
	_, err := call[struct{}](ctx, c, method, params)
	return err
}

// clientRequest looks a method up in the method table.
func clientRequest(method string) (protocol.Method, error) {
	m, ok := protocol.LookupMethod(method)
	if !ok || !m.FromClient || m.Notification {
		return m, fmt.Errorf("ahp: %s is not a request clients send", method)
	}
	return m, nil
}

// orZero returns *p, or the zero value for nil.
func orZero[P any](p *P) *P {
	if p == nil {
		return new(P)
	}
	return p
}

func needChannel(method, channel string) error {
	if channel == "" {
		return fmt.Errorf("ahp: %s: params naming the channel are required", method)
	}
	return nil
}

// Ping checks that the host answers.
func (c *Client) Ping(ctx context.Context, p *protocol.PingParams) error {
	return callNoResult(ctx, c, "ping", orZero(p))
}

// ListSessions returns one page of the session list, most recently
// modified first. Sessions follows every page.
func (c *Client) ListSessions(ctx context.Context, p *protocol.ListSessionsParams) (*protocol.ListSessionsResult, error) {
	return call[protocol.ListSessionsResult](ctx, c, "listSessions", orZero(p))
}

// CreateSession creates a session at the URI in p.Channel, which the
// client picks: protocol.SessionURI(client.NewID()), say. The session
// starts in lifecycle "creating"; subscribe to it to see it become ready.
func (c *Client) CreateSession(ctx context.Context, p *protocol.CreateSessionParams) error {
	if err := needChannel("createSession", orZero(p).Channel); err != nil {
		return err
	}
	return callNoResult(ctx, c, "createSession", p)
}

// DisposeSession removes a session and its chats.
func (c *Client) DisposeSession(ctx context.Context, p *protocol.DisposeSessionParams) error {
	if err := needChannel("disposeSession", orZero(p).Channel); err != nil {
		return err
	}
	return callNoResult(ctx, c, "disposeSession", p)
}

// CreateChat adds a chat (p.Chat, picked by the client) to the session in
// p.Channel.
func (c *Client) CreateChat(ctx context.Context, p *protocol.CreateChatParams) error {
	if err := needChannel("createChat", orZero(p).Channel); err != nil {
		return err
	}
	return callNoResult(ctx, c, "createChat", p)
}

// DisposeChat removes a chat from its session.
func (c *Client) DisposeChat(ctx context.Context, p *protocol.DisposeChatParams) error {
	if err := needChannel("disposeChat", orZero(p).Channel); err != nil {
		return err
	}
	return callNoResult(ctx, c, "disposeChat", p)
}

// CreateTerminal creates a terminal at p.Channel.
func (c *Client) CreateTerminal(ctx context.Context, p *protocol.CreateTerminalParams) error {
	if err := needChannel("createTerminal", orZero(p).Channel); err != nil {
		return err
	}
	return callNoResult(ctx, c, "createTerminal", p)
}

// DisposeTerminal disposes of a terminal.
func (c *Client) DisposeTerminal(ctx context.Context, p *protocol.DisposeTerminalParams) error {
	if err := needChannel("disposeTerminal", orZero(p).Channel); err != nil {
		return err
	}
	return callNoResult(ctx, c, "disposeTerminal", p)
}

// FetchTurns asks the host to load older turns into a chat's state. The
// turns arrive afterwards on the chat's subscription, as a
// chat/turnsLoaded envelope sent to this client alone.
func (c *Client) FetchTurns(ctx context.Context, p *protocol.FetchTurnsParams) (*protocol.FetchTurnsResult, error) {
	if err := needChannel("fetchTurns", orZero(p).Channel); err != nil {
		return nil, err
	}
	return call[protocol.FetchTurnsResult](ctx, c, "fetchTurns", p)
}

// Completions asks for inline completions on a chat channel.
func (c *Client) Completions(ctx context.Context, p *protocol.CompletionsParams) (*protocol.CompletionsResult, error) {
	if err := needChannel("completions", orZero(p).Channel); err != nil {
		return nil, err
	}
	return call[protocol.CompletionsResult](ctx, c, "completions", p)
}

// InvokeChangesetOperation runs an operation a changeset offers.
func (c *Client) InvokeChangesetOperation(ctx context.Context, p *protocol.InvokeChangesetOperationParams) (*protocol.InvokeChangesetOperationResult, error) {
	if err := needChannel("invokeChangesetOperation", orZero(p).Channel); err != nil {
		return nil, err
	}
	return call[protocol.InvokeChangesetOperationResult](ctx, c, "invokeChangesetOperation", p)
}

// Authenticate pushes a bearer token for a protected resource.
func (c *Client) Authenticate(ctx context.Context, p *protocol.AuthenticateParams) (*protocol.AuthenticateResult, error) {
	return call[protocol.AuthenticateResult](ctx, c, "authenticate", orZero(p))
}

// ResolveSessionConfig resolves the configuration a new session would get.
func (c *Client) ResolveSessionConfig(ctx context.Context, p *protocol.ResolveSessionConfigParams) (*protocol.ResolveSessionConfigResult, error) {
	return call[protocol.ResolveSessionConfigResult](ctx, c, "resolveSessionConfig", orZero(p))
}

// SessionConfigCompletions completes a dynamic field of a session
// configuration.
func (c *Client) SessionConfigCompletions(ctx context.Context, p *protocol.SessionConfigCompletionsParams) (*protocol.SessionConfigCompletionsResult, error) {
	return call[protocol.SessionConfigCompletionsResult](ctx, c, "sessionConfigCompletions", orZero(p))
}

// CreateResourceWatch opens a watch on a resource; subscribe to the
// returned channel to follow its changes.
func (c *Client) CreateResourceWatch(ctx context.Context, p *protocol.CreateResourceWatchParams) (*protocol.CreateResourceWatchResult, error) {
	return call[protocol.CreateResourceWatchResult](ctx, c, "createResourceWatch", orZero(p))
}

// ResourceRead reads a resource on the host.
func (c *Client) ResourceRead(ctx context.Context, p *protocol.ResourceReadParams) (*protocol.ResourceReadResult, error) {
	return call[protocol.ResourceReadResult](ctx, c, "resourceRead", orZero(p))
}

// ResourceWrite writes a resource on the host.
func (c *Client) ResourceWrite(ctx context.Context, p *protocol.ResourceWriteParams) (*protocol.ResourceWriteResult, error) {
	return call[protocol.ResourceWriteResult](ctx, c, "resourceWrite", orZero(p))
}

// ResourceList lists a directory on the host.
func (c *Client) ResourceList(ctx context.Context, p *protocol.ResourceListParams) (*protocol.ResourceListResult, error) {
	return call[protocol.ResourceListResult](ctx, c, "resourceList", orZero(p))
}

// ResourceCopy copies a resource on the host.
func (c *Client) ResourceCopy(ctx context.Context, p *protocol.ResourceCopyParams) (*protocol.ResourceCopyResult, error) {
	return call[protocol.ResourceCopyResult](ctx, c, "resourceCopy", orZero(p))
}

// ResourceDelete deletes a resource on the host.
func (c *Client) ResourceDelete(ctx context.Context, p *protocol.ResourceDeleteParams) (*protocol.ResourceDeleteResult, error) {
	return call[protocol.ResourceDeleteResult](ctx, c, "resourceDelete", orZero(p))
}

// ResourceMove moves a resource on the host.
func (c *Client) ResourceMove(ctx context.Context, p *protocol.ResourceMoveParams) (*protocol.ResourceMoveResult, error) {
	return call[protocol.ResourceMoveResult](ctx, c, "resourceMove", orZero(p))
}

// ResourceResolve returns what a resource is and its canonical URI.
func (c *Client) ResourceResolve(ctx context.Context, p *protocol.ResourceResolveParams) (*protocol.ResourceResolveResult, error) {
	return call[protocol.ResourceResolveResult](ctx, c, "resourceResolve", orZero(p))
}

// ResourceMkdir creates a directory, and its parents, on the host.
func (c *Client) ResourceMkdir(ctx context.Context, p *protocol.ResourceMkdirParams) (*protocol.ResourceMkdirResult, error) {
	return call[protocol.ResourceMkdirResult](ctx, c, "resourceMkdir", orZero(p))
}

// ResourceRequest asks the host to grant or revoke access to resources.
func (c *Client) ResourceRequest(ctx context.Context, p *protocol.ResourceRequestParams) (*protocol.ResourceRequestResult, error) {
	return call[protocol.ResourceRequestResult](ctx, c, "resourceRequest", orZero(p))
}

// MoveChat moves a chat atomically to another session or to a new one, or,
// when the destination is the chat's own session, reorders it there. The
// host answers with the chat's new URI.
func (c *Client) MoveChat(ctx context.Context, p *protocol.MoveChatParams) (*protocol.MoveChatResult, error) {
	if err := needChannel("moveChat", orZero(p).Channel); err != nil {
		return nil, err
	}
	return call[protocol.MoveChatResult](ctx, c, "moveChat", p)
}

// CreateTCPConnection asks the host to open a TCP connection channel. It
// is an experimental part of the protocol that hosts need not offer; one
// that does not answers with ErrMethodNotFound.
func (c *Client) CreateTCPConnection(ctx context.Context, p *protocol.CreateTCPConnectionParams) error {
	if err := needChannel("createTcpConnection", orZero(p).Channel); err != nil {
		return err
	}
	return callNoResult(ctx, c, "createTcpConnection", p)
}

// ListAutomationTriggerDefinitions lists the event triggers automations
// may use. Hosts without automations answer with ErrMethodNotFound.
func (c *Client) ListAutomationTriggerDefinitions(ctx context.Context, p *protocol.ListAutomationTriggerDefinitionsParams) (*protocol.ListAutomationTriggerDefinitionsResult, error) {
	return call[protocol.ListAutomationTriggerDefinitionsResult](ctx, c, "listAutomationTriggerDefinitions", orZero(p))
}

// RunAutomation starts a run of an automation. Hosts without automations
// answer with ErrMethodNotFound.
func (c *Client) RunAutomation(ctx context.Context, p *protocol.RunAutomationParams) (*protocol.RunAutomationResult, error) {
	return call[protocol.RunAutomationResult](ctx, c, "runAutomation", orZero(p))
}

// FetchAutomationRuns returns one page of an automation's run history.
// Hosts without automations answer with ErrMethodNotFound.
func (c *Client) FetchAutomationRuns(ctx context.Context, p *protocol.FetchAutomationRunsParams) (*protocol.FetchAutomationRunsResult, error) {
	return call[protocol.FetchAutomationRunsResult](ctx, c, "fetchAutomationRuns", orZero(p))
}
