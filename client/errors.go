package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/ahp-go/ahp/protocol"
	"github.com/ahp-go/ahp/protocol/view"
)

// Errors reported by the client itself. They are matched with [errors.Is].
var (
	// ErrClosed reports a client that was closed, or that stopped after a
	// failure it could not recover from (see [Client.Err]).
	ErrClosed = errors.New("ahp: closed")

	// ErrDisconnected reports a request that failed because the connection
	// to the host was lost. The client reconnects on its own; whether a
	// command that was in flight took effect is unknown.
	ErrDisconnected = errors.New("ahp: connection lost")

	// ErrNotInitialized reports a request made before Initialize succeeded.
	ErrNotInitialized = errors.New("ahp: not initialized; call Initialize first")

	// ErrNotConfirmed resolves the receipt of an action that was still
	// waiting for the host's echo when the connection was lost. After a
	// replay the host did not apply it; after a fresh snapshot it may have,
	// and the snapshot shows whether it did.
	ErrNotConfirmed = errors.New("ahp: action not confirmed before the connection was lost")

	// ErrChannelGone ends a subscription whose channel no longer exists on
	// the host: a session the host announced removed (root/sessionRemoved),
	// a chat removed from its session (session/chatRemoved), or a channel
	// found missing when reconnecting.
	ErrChannelGone = errors.New("ahp: channel no longer exists on the host")

	// ErrLagged is returned once by Subscription.Next when events were
	// discarded because the stream was not read fast enough. The
	// subscription's state is unaffected; read it again with State.
	ErrLagged = errors.New("ahp: events discarded because the stream was not read")
)

// Sentinels for the error codes of the protocol. Because [protocol.Error]
// values match on code under [errors.Is], any error the host returns with
// that code matches:
//
//	if errors.Is(err, client.ErrSessionNotFound) { ... }
var (
	ErrParse                      = codeError(protocol.CodeParseError)
	ErrInvalidRequest             = codeError(protocol.CodeInvalidRequest)
	ErrMethodNotFound             = codeError(protocol.CodeMethodNotFound)
	ErrInvalidParams              = codeError(protocol.CodeInvalidParams)
	ErrInternal                   = codeError(protocol.CodeInternalError)
	ErrSessionNotFound            = codeError(protocol.CodeSessionNotFound)
	ErrProviderNotFound           = codeError(protocol.CodeProviderNotFound)
	ErrSessionAlreadyExists       = codeError(protocol.CodeSessionAlreadyExists)
	ErrTurnInProgress             = codeError(protocol.CodeTurnInProgress)
	ErrUnsupportedProtocolVersion = codeError(protocol.CodeUnsupportedProtocolVersion)
	ErrContentNotFound            = codeError(protocol.CodeContentNotFound)
	ErrAuthRequired               = codeError(protocol.CodeAuthRequired)
	ErrNotFound                   = codeError(protocol.CodeNotFound)
	ErrPermissionDenied           = codeError(protocol.CodePermissionDenied)
	ErrAlreadyExists              = codeError(protocol.CodeAlreadyExists)
)

func codeError(code protocol.ErrorCode) error { return &protocol.Error{Code: code} }

// Error is a failure the host reported for one request. It unwraps to the
// [protocol.Error] received, so errors.Is matches the sentinels above by
// code, and errors.As finds either type.
type Error struct {
	// Method is the request that failed.
	Method string
	// Code is the JSON-RPC error code: a standard one or an AHP one
	// (protocol.AHPErrorCode).
	Code protocol.ErrorCode
	// Message is the host's description.
	Message string
	// Data holds the error's details as sent, nil when there are none.
	// DecodeData reads them into the type the code documents.
	Data json.RawMessage
}

// Error names the method once, even when the host's message starts with
// it too.
func (e *Error) Error() string {
	return fmt.Sprintf("ahp: %s: %s (code %d)", e.Method, e.Text(), e.Code)
}

// Text returns the host's message without the method name it may start
// with: what to show a user.
func (e *Error) Text() string {
	return strings.TrimPrefix(e.Message, e.Method+": ")
}

// Unwrap returns the error as the wire carried it.
func (e *Error) Unwrap() error {
	return &protocol.Error{Code: e.Code, Message: e.Message, Data: jsontext.Value(e.Data)}
}

// DecodeData decodes the error's details into v: a
// *protocol.AuthRequiredErrorData for ErrAuthRequired, a
// *protocol.PermissionDeniedErrorData for ErrPermissionDenied, a
// *protocol.UnsupportedProtocolVersionErrorData for
// ErrUnsupportedProtocolVersion. It fails when there are none.
func (e *Error) DecodeData(v any) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("ahp: %s: error %d carries no data", e.Method, e.Code)
	}
	return protocol.Unmarshal(e.Data, v)
}

// RejectedError reports a client action that the host refused. It resolves
// the action's [Receipt]; the optimistic effect of the action has been
// reverted by then.
type RejectedError struct {
	Channel string
	Action  protocol.StateAction
	// ClientSeq is the sequence number the client gave the action.
	ClientSeq int64
	// Reason is the host's explanation.
	Reason string
}

func (e *RejectedError) Error() string {
	return fmt.Sprintf("ahp: %s on %s rejected: %s", e.Action.Type(), e.Channel, e.Reason)
}

// DialError reports that the WebSocket handshake failed.
type DialError struct {
	URL string
	// StatusCode is the HTTP status the host answered with, or 0 when no
	// answer came (the host is unreachable).
	StatusCode int
	Err        error
}

func (e *DialError) Error() string {
	if e.StatusCode != 0 {
		return fmt.Sprintf("ahp: dial %s: %s: %v", e.URL, http.StatusText(e.StatusCode), e.Err)
	}
	return fmt.Sprintf("ahp: dial %s: %v", e.URL, e.Err)
}

func (e *DialError) Unwrap() error { return e.Err }

// wrapCallError turns an error from the JSON-RPC layer into the client's
// form: host failures become *Error, a lost connection matches
// ErrDisconnected.
func wrapCallError(method string, err error) error {
	if err == nil {
		return nil
	}
	var pe *protocol.Error
	if errors.As(err, &pe) {
		return &Error{Method: method, Code: pe.Code, Message: pe.Message, Data: json.RawMessage(pe.Data)}
	}
	if isConnErr(err) {
		return fmt.Errorf("ahp: %s: %w (%w)", method, ErrDisconnected, err)
	}
	return err
}

// upError brings an error an older host sent to its 1.x code
// (view.View.UpError); other errors pass unchanged.
func upError(v *view.View, err error) error {
	var pe *protocol.Error
	if err == nil || !errors.As(err, &pe) {
		return err
	}
	if up := v.UpError(pe); up != pe {
		return up
	}
	return err
}

// permanent reports whether an error from a reconnection attempt means
// that trying again cannot help.
func permanent(err error) bool {
	var de *DialError
	if errors.As(err, &de) {
		s := de.StatusCode
		return s >= 400 && s < 500 && s != http.StatusRequestTimeout && s != http.StatusTooManyRequests
	}
	for _, target := range []error{
		ErrUnsupportedProtocolVersion, ErrInvalidParams, ErrInvalidRequest,
		ErrMethodNotFound, ErrAuthRequired, ErrPermissionDenied,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}
