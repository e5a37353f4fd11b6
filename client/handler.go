package client

import (
	"fmt"

	"github.com/ahp-go/ahp/protocol"
)

// Requests from the host are answered by the functions of Options.Handlers
// (handlers_gen.go, generated from the method table by
// internal/gen/clientgen).

// orNoResult returns err, or, when a handler returned neither a result nor
// an error, an internal error saying so: the protocol's results are never
// null.
func orNoResult(method string, err error) error {
	if err != nil {
		return err
	}
	return &protocol.Error{Code: protocol.CodeInternalError, Message: fmt.Sprintf("%s: the client's handler returned no result", method)}
}
