package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/datadir"
	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/sqlite"
)

// storeConfig holds the persistence settings: where sessions are kept.
type storeConfig struct {
	// Store is "sqlite" (the default: a database in DataDir that survives
	// restarts and crashes) or "memory" (nothing survives the process).
	Store string `json:"store"`
	// DataDir holds the database; empty means defaultDataDir.
	DataDir string `json:"dataDir"`
	// SaveWindow is how long changes may gather before they are written
	// together (host.Options.SaveWindow); "0s" writes each batch at once.
	SaveWindow string `json:"saveWindow"`
	// SpareProcs is how many Go processors ahpd runs with beyond the
	// default (see spareProcs).
	SpareProcs int `json:"spareProcs"`
	// StoreReadShare is host.Options.StoreReadShare.
	StoreReadShare float64 `json:"storeReadShare"`
	// BackupInterval is how often the sqlite store refreshes its backup
	// in the data directory (it does at a clean stop too); "0s" takes
	// none.
	BackupInterval string `json:"backupInterval"`
}

func (c *storeConfig) defaults() {
	c.Store = "sqlite"
	c.SaveWindow = host.DefaultSaveWindow.String()
	c.SpareProcs = defaultSpareProcs
	c.StoreReadShare = host.DefaultStoreReadShare
	c.BackupInterval = sqlite.DefaultBackupInterval.String()
}

func (c *storeConfig) register(fs *flag.FlagSet) {
	fs.StringVar(&c.Store, "store", c.Store, "where sessions are kept: sqlite (in --data-dir, survives restarts) or memory (lost on exit)")
	fs.StringVar(&c.SaveWindow, "save-window", c.SaveWindow, "how long streamed changes may gather before one write saves them all; a crash can lose up to this much more (0s: write at once)")
	fs.IntVar(&c.SpareProcs, "spare-procs", c.SpareProcs, "Go processors to run with beyond one per CPU: one lets store reads, which run at background priority, take none from the streams to clients, another keeps one free while the store's writer waits for the disk (ignored when GOMAXPROCS is set; 0: none)")
	fs.Float64Var(&c.StoreReadShare, "store-read-share", c.StoreReadShare, "share of the time store reads may take while they come back to back and the host is streaming (0 to 1; 1: no pause): after each read the reader rests in proportion, so that a burst of cold sessions loading leaves the CPUs to the streams to clients")
	fs.StringVar(&c.BackupInterval, "backup-interval", c.BackupInterval, "how often the session database is copied to "+sqlite.BackupFile+" in --data-dir (and at a clean stop) while it changed; a database found missing or damaged at start is restored from it (0s: no backups)")
	fs.StringVar(&c.DataDir, "data-dir", c.DataDir, "directory of the session database (default $XDG_DATA_HOME/ahpd, else %LocalAppData%\\ahpd on Windows, else ~/.local/share/ahpd)")
}

func (c *storeConfig) validate() error {
	if c.SpareProcs < 0 || c.SpareProcs > maxSpareProcs {
		return fmt.Errorf("--spare-procs %d: want 0 to %d", c.SpareProcs, maxSpareProcs)
	}
	if !(c.StoreReadShare > 0 && c.StoreReadShare <= 1) {
		return fmt.Errorf("--store-read-share %v: want more than 0, up to 1", c.StoreReadShare)
	}
	if d, err := time.ParseDuration(c.SaveWindow); err != nil || d < 0 || d > time.Second {
		return fmt.Errorf("--save-window %q: want a duration from 0s to 1s", c.SaveWindow)
	}
	if d, err := time.ParseDuration(c.BackupInterval); err != nil || d < 0 || (d > 0 && d < time.Second) {
		return fmt.Errorf("--backup-interval %q: want 0s (none) or a duration of 1s or more", c.BackupInterval)
	}
	switch c.Store {
	case "sqlite", "memory":
		return nil
	}
	return fmt.Errorf("--store %q: want sqlite or memory", c.Store)
}

// saveWindow is the host's SaveWindow for the configured --save-window.
func (c *storeConfig) saveWindow() time.Duration {
	d, _ := time.ParseDuration(c.SaveWindow)
	if d == 0 {
		return -1 // the host's zero means its default
	}
	return d
}

// open opens the configured store; the caller closes it after the host.
func (c *storeConfig) open(log *slog.Logger) (store.Store, error) {
	if c.Store == "memory" {
		log.Warn("sessions are kept in memory only (--store memory): they are lost when ahpd exits")
		return store.NewMemory(), nil
	}
	dir := c.DataDir
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(); err != nil {
			return nil, err
		}
	}
	interval, _ := time.ParseDuration(c.BackupInterval)
	if interval == 0 {
		interval = -1 // the store's zero means its default
	}
	st, err := sqlite.Open(dir, &sqlite.Options{BackupInterval: interval, Logger: log})
	if err != nil {
		return nil, err
	}
	backup := "none (--backup-interval 0s)"
	if interval > 0 {
		backup = filepath.Join(dir, sqlite.BackupFile) + " every " + interval.String() + " and at a clean stop"
	}
	log.Info("session store opened", "path", st.Path(), "backup", backup)
	return st, nil
}

// defaultDataDir is ahpd under the user's XDG data home.
func defaultDataDir() (string, error) {
	return datadir.Default(os.Getenv)
}

// Spare processors (--spare-procs). The host reads its store on a thread
// at background priority: with a Go processor of its own, a burst of
// session loads runs in the CPU time the streams to clients leave instead
// of holding, for as long as each read runs, one of the processors they
// need. The second spare keeps a processor for the streams while the
// store's writer waits in fsync: a goroutine in a system call keeps its
// processor until the runtime's monitor notices, which can take
// milliseconds.
const (
	defaultSpareProcs = 2
	maxSpareProcs     = 16
)

// spareProcs gives the Go scheduler n processors more than it has, unless
// GOMAXPROCS is set in the environment, and returns a func that takes
// them back.
func spareProcs(n int) (restore func()) {
	if n == 0 || os.Getenv("GOMAXPROCS") != "" {
		return func() {}
	}
	prev := runtime.GOMAXPROCS(0)
	runtime.GOMAXPROCS(prev + n)
	return func() { runtime.GOMAXPROCS(prev) }
}
