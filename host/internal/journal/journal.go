// Package journal hands a host's changes to its store without ever making
// the host wait for a disk.
//
// Contract: Queue and QueueCatalog never block and may be called with the
// host's lock held (lock order: the host's lock, then the journal's). One
// writer goroutine (Start; stopped by Close or Abandon) takes everything
// queued so far and writes it as one store.Batch. A change is durable once
// the batch holding it is written: Wait blocks until a serverSeq is.
// A failed write is retried with the same batch until it succeeds; while
// the store fails, or a change has waited longer than Options.MaxAge,
// Failing says why the host should refuse new work. Nothing queued is
// dropped except by Abandon.
package journal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ahp-go/ahp/internal/logbound"
	"github.com/ahp-go/ahp/store"
)

// Journal hands the host's changes to the store without ever making the
// sequencer wait for a disk.
//
// The host queues operations while it holds its lock (queue never blocks);
// one writer goroutine takes everything queued so far and writes it as one
// batch, one transaction (group commit). While a batch is being written the
// next one gathers, so under load every commit carries many actions and the
// store's per-commit cost (an fsync) is shared between them.
//
// A steady stream (one delta a millisecond, say) would otherwise make every
// change a batch of its own, and the store's per-commit work would then
// cost about as much as everything else the host does for it. So, unless
// somebody waits for a change to be saved, the writer lets a batch gather
// for up to Options.Gather after the previous write began: at most that much more
// can be lost in a crash, and a commit carries a whole window of changes.
//
// A change is durable once the batch holding it has been written. durable
// is the serverSeq up to which everything queued is durable; Wait blocks
// until a given serverSeq is. What a crash can lose is what was queued and
// not yet durable: the batch being written and the one gathering.
//
// A failed write is retried, with the same batch, until it succeeds: the
// host keeps the changes in memory and does not drop them. While the store
// fails, or while the oldest change not yet durable is older than maxAge,
// Failing reports an error and the host refuses new work, so a slow or
// failing disk cannot silently widen what a crash would lose.
//
// Lock order: the host's lock, then Journal.mu.
type Journal struct {
	st     store.Store
	log    *slog.Logger
	maxAge time.Duration
	gather time.Duration    // how long a batch may gather when nobody waits
	now    func() time.Time // the host's clock

	mu       sync.Mutex
	ops      []Pending
	catalog  map[string]int // session URI -> index in ops of its pending PutSession
	queued   int64          // highest serverSeq queued
	durable  int64          // everything queued up to this serverSeq is durable
	oldest   time.Time      // when the oldest change not yet durable was queued
	inflight time.Time      // when the oldest change of the batch being written was queued
	err      error          // the last write failure; nil once a write succeeds
	stalled  bool           // the batch being written was logged as stalled
	checkErr error          // a lasting fault the store's idle check found
	checkLog logbound.Repeats
	changed  chan struct{} // closed and replaced when durable or err changes
	stopping bool
	waiters  int       // callers of Wait and WaitLease blocked on a write
	began    time.Time // when the last write began
	lost     error     // set when the writer gave up on stop
	// held counts open holds (see Hold); unheld is closed when the last
	// one is released.
	held   int
	unheld chan struct{}

	wake    chan struct{}
	hurry   chan struct{} // a waiter arrived: write what has gathered now
	done    chan struct{}
	ctx     context.Context // bounds writes; cancelled to abandon them
	cancel  context.CancelFunc
	leaseOK atomic.Int64 // the serverSeq limit known durable

	stats Stats
	// onWrite, when set, is told how long each successful write took.
	onWrite func(time.Duration)
}

// Pending is one queued operation: Op, ready, or else Encode, which the
// writer calls to make it (states are immutable, so encoding them later,
// off the host's lock, is safe).
type Pending struct {
	Op     store.Op
	Encode func() (store.Op, error)
}

// Stats describes the writer's work.
type Stats struct {
	Batches int64
	Ops     int64
	MaxLag  time.Duration // longest a change waited to become durable
	Retries int64
	// Backlog is how many operations are queued and not yet taken by
	// the writer; Oldest how long the oldest change not yet durable has
	// waited (0 when none waits).
	Backlog int
	Oldest  time.Duration
}

// Options configures a Journal.
type Options struct {
	// Logger receives the writer's logs; nil discards them.
	Logger *slog.Logger
	// Now is the host's clock; nil means time.Now.
	Now func() time.Time
	// MaxAge is how long a change may wait to be saved before Failing
	// reports it.
	MaxAge time.Duration
	// Gather is how long changes nobody waits for may gather before they
	// are written together; zero or negative writes each batch as soon
	// as the previous write ends.
	Gather time.Duration
	// Durable is the serverSeq up to which everything is in the store
	// already, and Lease the serverSeq limit the store has recorded.
	Durable, Lease int64
	// OnWrite, when set, is told how long each successful write took, on
	// the writer's goroutine.
	OnWrite func(time.Duration)
}

// maxGatherOps is how many operations a batch holds before it is written
// without waiting for the rest of its window.
const maxGatherOps = 4096

// New returns a journal writing to st; Start starts its writer.
func New(st store.Store, o Options) *Journal {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	j := &Journal{
		st:      st,
		log:     o.Logger,
		maxAge:  o.MaxAge,
		gather:  o.Gather,
		now:     o.Now,
		onWrite: o.OnWrite,
		catalog: map[string]int{},
		queued:  o.Durable,
		durable: o.Durable,
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		hurry:   make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	j.ctx, j.cancel = context.WithCancel(context.Background())
	j.leaseOK.Store(o.Lease)
	return j
}

// Start runs the writer. Its owner stops it with Close or Abandon.
func (j *Journal) Start() { go j.run() }

// Queue adds operations for the change with serverSeq seq (or, with no
// operations, just notes that seq exists). It never blocks.
func (j *Journal) Queue(seq int64, ops ...Pending) {
	j.mu.Lock()
	if len(ops) > 0 && j.oldest.IsZero() {
		j.oldest = j.now()
	}
	j.ops = append(j.ops, ops...)
	j.queued = max(j.queued, seq)
	j.mu.Unlock()
	j.signal()
}

// QueueCatalog queues a catalog entry, replacing one still pending for the
// same session (an upsert: only the last one matters).
func (j *Journal) QueueCatalog(uri string, seq int64, p Pending) {
	j.mu.Lock()
	if i, ok := j.catalog[uri]; ok {
		j.ops[i] = p
		j.queued = max(j.queued, seq)
		j.mu.Unlock()
		return
	}
	if j.oldest.IsZero() {
		j.oldest = j.now()
	}
	j.catalog[uri] = len(j.ops)
	j.ops = append(j.ops, p)
	j.queued = max(j.queued, seq)
	j.mu.Unlock()
	j.signal()
}

// Hold keeps the writer from taking what is queued until the matching
// Release, so that every operation queued in between goes to the store in
// the same batch, which the store applies atomically: a change made of
// several operations (a chat moving between sessions) is then kept whole
// or not at all. Holds are taken and released under the host's lock, with
// no I/O in between.
func (j *Journal) Hold() {
	j.mu.Lock()
	if j.held == 0 {
		j.unheld = make(chan struct{})
	}
	j.held++
	j.mu.Unlock()
}

// Release ends a hold.
func (j *Journal) Release() {
	j.mu.Lock()
	j.held--
	if j.held == 0 {
		close(j.unheld)
	}
	j.mu.Unlock()
	j.signal()
}

// Forget drops the pending catalog entry of a session about to be deleted,
// so no later upsert can land in its place.
func (j *Journal) Forget(uri string) {
	j.mu.Lock()
	delete(j.catalog, uri)
	j.mu.Unlock()
}

func (j *Journal) signal() {
	select {
	case j.wake <- struct{}{}:
	default:
	}
}

// run is the writer goroutine.
func (j *Journal) run() {
	defer close(j.done)
	for {
		j.mu.Lock()
		for j.held > 0 || len(j.ops) == 0 && j.queued <= j.durable && !j.stopping {
			if j.held > 0 {
				unheld := j.unheld
				j.mu.Unlock()
				<-unheld
			} else {
				j.mu.Unlock()
				j.idle()
			}
			j.mu.Lock()
		}
		if len(j.ops) == 0 && j.queued <= j.durable {
			j.mu.Unlock()
			return // stopping, and everything is written
		}
		if d := j.gatherLocked(); d > 0 {
			j.mu.Unlock()
			j.linger(d)
			j.mu.Lock()
		}
		for j.held > 0 { // a hold began while lingering
			unheld := j.unheld
			j.mu.Unlock()
			<-unheld
			j.mu.Lock()
		}
		ops, upTo, since := j.ops, j.queued, j.oldest
		j.ops, j.oldest, j.inflight = nil, time.Time{}, since
		j.began = time.Now()
		clear(j.catalog)
		j.mu.Unlock()
		if err := j.write(ops, upTo, since); err != nil {
			j.mu.Lock()
			j.lost = err
			j.mu.Unlock()
			return
		}
	}
}

// gatherLocked returns how long the gathering batch should wait before it
// is written: what is left of the window since the last write began, or
// zero when somebody waits, the journal stops or the batch is big.
func (j *Journal) gatherLocked() time.Duration {
	if j.gather <= 0 || j.waiters > 0 || j.stopping || len(j.ops) >= maxGatherOps || j.began.IsZero() {
		return 0
	}
	return j.gather - time.Since(j.began)
}

// linger waits up to d for more of the batch, returning early when a
// waiter arrives or the journal stops.
func (j *Journal) linger(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-j.hurry:
	case <-j.ctx.Done():
	}
}

// waiting counts a caller blocked until a write, and makes the writer
// write what has gathered; the returned func ends the count.
func (j *Journal) waiting() func() {
	j.mu.Lock()
	j.waiters++
	j.mu.Unlock()
	select {
	case j.hurry <- struct{}{}:
	default:
	}
	return func() {
		j.mu.Lock()
		j.waiters--
		j.mu.Unlock()
	}
}

// write encodes and writes one batch, retrying until it succeeds. It gives
// up only when the journal is stopping and the store still fails.
func (j *Journal) write(ops []Pending, upTo int64, since time.Time) error {
	batch := make(store.Batch, 0, len(ops))
	var lease int64
	for _, p := range ops {
		op := p.Op
		if p.Encode != nil {
			var err error
			if op, err = p.Encode(); err != nil {
				// Wire types always encode; this is a bug. The rest of
				// the batch is still worth keeping.
				j.log.Error("encoding a change for the store failed", "err", err)
				continue
			}
		}
		if s, ok := op.(store.SetSeq); ok {
			lease = max(lease, s.Seq)
		}
		batch = append(batch, op)
	}
	stall := j.watchStall(since)
	defer stall.Stop()
	for attempt := 0; ; attempt++ {
		began := time.Now()
		err := j.st.Write(j.ctx, batch)
		if err == nil {
			if j.onWrite != nil {
				j.onWrite(time.Since(began))
			}
			break
		}
		j.mu.Lock()
		j.err = err
		j.stats.Retries++
		j.notifyLocked()
		stopping := j.stopping
		j.mu.Unlock()
		if j.ctx.Err() != nil || (stopping && attempt >= 2) {
			return fmt.Errorf("%d changes up to serverSeq %d were not saved: %w", len(batch), upTo, err)
		}
		j.log.Error("saving changes failed; retrying (new work is refused meanwhile)", "changes", len(batch), "attempt", attempt+1, "err", err)
		select {
		case <-time.After(min(50*time.Millisecond<<min(attempt, 6), 2*time.Second)):
		case <-j.ctx.Done():
		}
	}
	if lease > 0 {
		j.leaseOK.Store(lease)
	}
	lag := j.now().Sub(since)
	stall.Stop()
	j.mu.Lock()
	if j.err != nil || j.stalled {
		j.log.Info("saving changes works again", "waited", lag.Round(time.Millisecond))
	}
	j.stalled = false
	j.durable, j.err, j.inflight = max(j.durable, upTo), nil, time.Time{}
	j.stats.Batches++
	j.stats.Ops += int64(len(batch))
	if !since.IsZero() {
		j.stats.MaxLag = max(j.stats.MaxLag, lag)
	}
	j.notifyLocked()
	j.mu.Unlock()
	return nil
}

// watchStall logs, once, when the oldest change of the batch being
// written has waited longer than maxAge: a store that blocks (a frozen
// disk) fails nothing, so nothing else would say so.
func (j *Journal) watchStall(since time.Time) *time.Timer {
	if since.IsZero() {
		since = time.Now()
	}
	// A batch that is already late when its write starts (the backlog of
	// a stall that just ended) is only called stalled if the write itself
	// then takes half of maxAge.
	return time.AfterFunc(max(j.maxAge-time.Since(since), j.maxAge/2), func() {
		j.mu.Lock()
		defer j.mu.Unlock()
		if j.stalled || j.inflight.IsZero() {
			return
		}
		j.stalled = true
		j.log.Warn("saving changes is stalled: the store has not answered; new work is refused until it does",
			"waited", time.Since(since).Round(time.Millisecond), "maxSaveDelay", j.maxAge)
	})
}

// checkEvery is how often an idle writer asks the store to check its
// files (store.Checker).
const checkEvery = time.Second

// idle waits for work; meanwhile, about once a second, it has the store
// check its files, so that damage is found (and what can be saved, saved)
// without waiting for the next change. A lasting fault is reported like a
// failed write: the host refuses new work until the store is sound.
func (j *Journal) idle() {
	ck, ok := j.st.(store.Checker)
	if !ok {
		<-j.wake
		return
	}
	t := time.NewTimer(checkEvery)
	defer t.Stop()
	select {
	case <-j.wake:
		return
	case <-t.C:
	}
	err := ck.Check(j.ctx)
	if err != nil && !errors.Is(err, store.ErrClosed) {
		first := err
		err = ck.Check(j.ctx) // nil when the first check repaired the fault
		if ok, held := j.checkLog.Allow(time.Now()); ok {
			if err == nil {
				j.log.Warn("the store found damage to its files and repaired it", "err", first, "heldBack", held)
			} else {
				j.log.Error("the store found damage to its files; new work is refused", "err", err, "heldBack", held)
			}
		}
	}
	if errors.Is(err, store.ErrClosed) {
		err = nil
	}
	j.mu.Lock()
	if (err != nil) != (j.checkErr != nil) {
		j.checkErr = err
		j.notifyLocked()
	}
	j.mu.Unlock()
}

func (j *Journal) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// ErrNotSaved is what Wait returns, wrapped, when a write failed.
var ErrNotSaved = errors.New("the change is not saved yet")

// Wait blocks until every change up to serverSeq seq is durable. It
// returns an error when ctx ends, or when a write fails meanwhile (the
// writer keeps retrying; the error says so).
func (j *Journal) Wait(ctx context.Context, seq int64) error {
	counted := false
	for {
		j.mu.Lock()
		durable, err, ch, lost := j.durable, j.err, j.changed, j.lost
		j.mu.Unlock()
		switch {
		case durable >= seq:
			return nil
		case lost != nil:
			return fmt.Errorf("%w: %w", ErrNotSaved, lost)
		case err != nil:
			return fmt.Errorf("%w (the host keeps retrying): %w", ErrNotSaved, err)
		}
		if !counted {
			counted = true
			defer j.waiting()()
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Failing returns why the host should refuse new work, or nil: the store
// fails or is damaged, or a change has waited longer than MaxAge to be
// saved.
func (j *Journal) Failing() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err != nil {
		return fmt.Errorf("the store is failing: %w", j.err)
	}
	if j.checkErr != nil {
		return fmt.Errorf("the store is damaged: %w", j.checkErr)
	}
	if j.lost != nil {
		return j.lost
	}
	oldest := j.inflight
	if oldest.IsZero() || (!j.oldest.IsZero() && j.oldest.Before(oldest)) {
		oldest = j.oldest
	}
	if !oldest.IsZero() {
		if age := j.now().Sub(oldest); age > j.maxAge {
			return fmt.Errorf("the store has not saved changes for %v", age.Round(time.Millisecond))
		}
	}
	return nil
}

// Changed returns a channel closed at the writer's next outcome: a batch
// written, a write failed, or the store's check changed its verdict.
func (j *Journal) Changed() <-chan struct{} {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.changed
}

// DurableSeq returns the serverSeq up to which everything is durable.
func (j *Journal) DurableSeq() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.durable
}

// LeaseOK returns the serverSeq limit the store has recorded: the highest
// store.SetSeq written, or Options.Lease.
func (j *Journal) LeaseOK() int64 { return j.leaseOK.Load() }

// WaitLease blocks until the serverSeq limit recorded in the store reaches
// seq. The host asks for a new limit long before it needs it, so this only
// waits when the store is far behind.
func (j *Journal) WaitLease(seq int64) {
	if j.leaseOK.Load() >= seq {
		return
	}
	defer j.waiting()()
	for j.leaseOK.Load() < seq {
		j.mu.Lock()
		ch, lost := j.changed, j.lost
		j.mu.Unlock()
		if lost != nil || j.leaseOK.Load() >= seq {
			return
		}
		select {
		case <-ch:
		case <-j.done:
			return
		}
	}
}

// Close writes everything queued and stops the writer. It returns an
// error when changes could not be saved.
func (j *Journal) Close() error {
	j.mu.Lock()
	j.stopping = true
	j.mu.Unlock()
	j.signal()
	select {
	case j.hurry <- struct{}{}:
	default:
	}
	<-j.done
	j.cancel()
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.lost
}

// Abandon stops the writer without writing what is queued, as a crash
// would. Tests use it.
func (j *Journal) Abandon() {
	j.mu.Lock()
	j.stopping = true
	j.ops = nil
	j.queued = j.durable
	j.mu.Unlock()
	j.cancel()
	j.signal()
	<-j.done
}

// Stats returns the writer's work so far and, at now, its backlog.
func (j *Journal) Stats(now time.Time) Stats {
	j.mu.Lock()
	defer j.mu.Unlock()
	s := j.stats
	s.Backlog = len(j.ops)
	oldest := j.inflight
	if oldest.IsZero() || (!j.oldest.IsZero() && j.oldest.Before(oldest)) {
		oldest = j.oldest
	}
	if !oldest.IsZero() {
		s.Oldest = max(now.Sub(oldest), 0)
	}
	return s
}
