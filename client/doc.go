// Package client is the Go client of the Agent Host Protocol: it connects
// to a host, mirrors the channels it subscribes to, dispatches actions with
// write-ahead reconciliation, and reconnects on its own after a connection
// loss.
//
// Quick start, against `go run ./cmd/ahpd`:
//
//	ctx := context.Background()
//	c, err := client.Connect(ctx, "ws://127.0.0.1:7247/", nil) // dials and initializes
//	if err != nil { ... }
//	defer c.Close()
//
//	session := protocol.SessionURI(client.NewID())
//	if err := c.CreateSession(ctx, &protocol.CreateSessionParams{Channel: session}); err != nil { ... }
//	ss, err := c.Subscribe(ctx, &protocol.SubscribeParams{Channel: session})
//	if err != nil { ... }
//	chat, err := c.Subscribe(ctx, &protocol.SubscribeParams{
//		Channel: *ss.Session().DefaultChat,
//	})
//	if err != nil { ... }
//	chat.Dispatch(ctx, &protocol.ChatTurnStartedAction{
//		TurnID: client.NewID(), StartedAt: protocol.FormatTime(time.Now()),
//		Message: protocol.Message{Text: "hello", Origin: protocol.MessageOrigin{Kind: protocol.MessageKindUser}},
//	})
//	for {
//		ev, err := chat.Next(ctx)
//		if err != nil { ... }
//		state := chat.Chat() // the reply, so far
//		...
//	}
//
// # Commands
//
// Every command a client sends is a method of [Client] of the form
// Method(ctx, *Params) (*Result, error): [Client.CreateSession],
// [Client.ListSessions], [Client.FetchTurns] and so on. [Connect] dials
// and performs the handshake, offering every protocol version this module
// supports (or [Options].ProtocolVersions); [Client.InitializeResult] holds
// the host's answer. [Dial] and [Client.Initialize] keep the two steps
// apart for callers that need them. A failure the host
// reports is an [*Error] carrying the JSON-RPC code and the AHP error
// data; errors.Is matches it against sentinels such as
// [ErrSessionNotFound].
//
// Whatever version the host negotiated, the client's API is the 1.x one:
// with a host that speaks an older version (0.5.1 to 0.8.x) the client
// converts what it sends down to that version's shapes (createSession's
// working directories, actions, members the version lacks) and what it
// receives up (snapshots, actions, session summaries, auth/required,
// error codes), with the conversions of package protocol/view. Its
// answers to the host's own requests carry the version's error codes.
//
// # Mirrors and write-ahead reconciliation
//
// A [Subscription] mirrors its channel as the guide's reconciliation page
// describes. The client keeps, per channel, a confirmed state (the
// snapshot plus every envelope the host sequenced since) and the list of
// its own actions the host has not echoed yet. [Client.Dispatch] applies
// an action locally at once, so [Subscription.State] (the optimistic state:
// confirmed plus pending) shows it immediately. When the host echoes the
// action, it leaves the pending list and joins the confirmed state; when
// another client's or the host's action arrives, it is applied to the
// confirmed state and the pending actions are replayed on top; when the
// host rejects the action, it is dropped, which reverts its effect, and
// its [Receipt] reports a [*RejectedError]. The same reducers (package
// reducer) run on host and client, so a mirror with no pending actions
// equals the host's state.
//
// Subscriptions stream what arrives on their channel ([Subscription.Next])
// and call watchers with the new optimistic state after every change
// ([Subscription.Watch], or [WatchOf] with the state typed). The state
// comes typed from [Subscription.Root], [Subscription.Session],
// [Subscription.Chat], [Subscription.Terminal] and [StateOf], each nil for
// another kind of channel.
//
// # Reconnection
//
// Once initialized, a client that loses its connection reconnects with
// exponential backoff and full jitter. It sends reconnect with the last
// serverSeq it saw and its subscriptions, and catches up from the replay
// or the fresh snapshots the host answers with; channels the host no
// longer has end with [ErrChannelGone]. Pending actions are cleared, as
// the protocol requires (their receipts report [ErrNotConfirmed]), and the
// session list is fetched again. [Options].OnConnection hears about each
// step. Errors that retrying cannot fix (a refused token, an unsupported
// protocol version) stop the client; [Client.Err] says why.
//
// # Requests from the host
//
// A host may send the resource* requests and createResourceWatch to a
// client. They go to the typed functions of [Options].Handlers, one per
// method, generated from the protocol's method table; a method without a
// function is answered with a method-not-found error, so the host never
// waits.
//
// # Concurrency
//
// A Client and its Subscriptions are safe for concurrent use. Each
// blocking method takes a context that bounds it. Close waits for every
// goroutine the client started.
package client
