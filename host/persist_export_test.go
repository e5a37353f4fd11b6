package host

import (
	"context"
	"time"

	"github.com/ahp-go/ahp/host/internal/versions"
)

// Crash stops the host the way a killed process would, as far as its store
// can tell: changes not yet written are dropped and running turns are not
// ended.
func (h *Host) Crash() { h.shutdown(false) }

// SaveStats reports the writer's batches, operations and the longest a
// change waited to be saved.
func (h *Host) SaveStats() (batches, ops int64, maxLag time.Duration) {
	s := h.jr.Stats(time.Now())
	return s.Batches, s.Ops, s.MaxLag
}

// SeedCatalog writes n sessions to a store's catalog (tests and
// benchmarks of listSessions).
var SeedCatalog = seedCatalog

// MaxRememberedClients is the bound of the version memory.
const MaxRememberedClients = versions.MaxClients

// RememberVersion records a client's version as initialize does.
func RememberVersion(h *Host, clientID, version string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.versions.Put(clientID, version)
}

// RememberedVersions is how many clients' versions are remembered.
func RememberedVersions(h *Host) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.versions.Len()
}

// RememberedVersion is the version remembered for a client, or "".
func RememberedVersion(h *Host, clientID string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.versions.Get(clientID)
}

// WaitWrite waits for the store writer's next outcome (a batch written or
// a write failed), or for ctx.
func (h *Host) WaitWrite(ctx context.Context) {
	select {
	case <-h.jr.Changed():
	case <-ctx.Done():
	}
}

// ServedBy says which entry of h's method table serves a client method:
// "host", "workspace", or "" when none does.
func ServedBy(h *Host, method string) string {
	switch r := h.routes[method]; {
	case r.serve == nil:
		return ""
	case r.ws:
		return "workspace"
	default:
		return "host"
	}
}
