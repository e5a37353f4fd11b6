package jsonrpc

import (
	"time"

	"github.com/ahp-go/ahp/internal/logbound"
	"github.com/ahp-go/ahp/protocol"
)

// peerLog bounds what one peer's messages write to the log: values the
// peer controls are clipped, and each kind of complaint is thinned out
// when it repeats (the first few lines, then one per interval saying how
// many were held back).
type peerLog struct {
	invalid, unattributed, failed logbound.Repeats
}

func (c *Conn) logInvalid(err error, id protocol.ID) {
	if ok, held := c.peerLog.invalid.Allow(time.Now()); ok {
		c.log.Warn("jsonrpc: invalid message", "error", logbound.Value(err.Error()), "id", logbound.Value(id.String()), "heldBack", held)
	}
}

func (c *Conn) logUnattributed(e *protocol.Error) {
	if ok, held := c.peerLog.unattributed.Allow(time.Now()); ok {
		c.log.Warn("jsonrpc: peer reported an error it could not attribute", "code", e.Code, "message", logbound.Value(e.Message), "heldBack", held)
	}
}

func (c *Conn) logHandlerFailed(method string, err error) {
	if ok, held := c.peerLog.failed.Allow(time.Now()); ok {
		c.log.Warn("jsonrpc: notification handler failed", "method", logbound.Value(method), "error", logbound.Value(err.Error()), "heldBack", held)
	}
}
