package host

import "time"

// Crash stops the host the way a killed process would, as far as its store
// can tell: changes not yet written are dropped and running turns are not
// ended.
func (h *Host) Crash() { h.shutdown(false) }

// SaveStats reports the writer's batches, operations and the longest a
// change waited to be saved.
func (h *Host) SaveStats() (batches, ops int64, maxLag time.Duration) {
	s := h.jr.statsNow()
	return s.Batches, s.Ops, s.MaxLag
}

// SeedCatalog writes n sessions to a store's catalog (tests and
// benchmarks of listSessions).
var SeedCatalog = seedCatalog
