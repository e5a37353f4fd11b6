package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ahp-go/ahp/store"
)

// The rolling backup. The store copies its database into BackupFile, in
// the same directory, every Options.BackupInterval and when it closes,
// whenever something was written since the last copy. A copy is taken
// with VACUUM INTO (a consistent snapshot, read beside the writer without
// holding it up), checked with quick_check, synced, and only then renamed
// over the previous backup, so a good backup is never replaced by a torn
// or damaged one. A store that has found its files damaged takes no more
// backups: the last one is what the next start restores.
//
// At Open, a database that is missing or empty where a store was kept,
// that fails its check, or that the last run marked damaged, is moved
// aside (renamed with the time) and the backup is copied in its place;
// the error log line says what span was lost. See restoreBackup.

// BackupFile is the name of the backup in the data directory.
const BackupFile = "ahpd.backup.db"

// DefaultBackupInterval is how often the backup is refreshed when
// Options.BackupInterval is zero.
const DefaultBackupInterval = 5 * time.Minute

// restoreSeqGap is how far above the backup's serverSeq a restored store
// starts: values issued after the backup was taken must never be issued
// again, and no run issues this many between two backups.
const restoreSeqGap = 1 << 32

// BackupInfo describes a backup.
type BackupInfo struct {
	// Path is the backup file.
	Path string
	// At is when the copy was taken.
	At time.Time
	// Seq is the highest serverSeq the copy records.
	Seq int64
	// Sessions is the number of sessions in its catalog.
	Sessions int64
	// Bytes is the size of the file.
	Bytes int64
}

// Backup refreshes the backup now, unless nothing was written since the
// last one (then it returns that one's description). It fails, keeping
// the previous backup, when the store is closed or damaged.
func (s *Store) Backup(ctx context.Context) (BackupInfo, error) {
	s.backupMu.Lock()
	defer s.backupMu.Unlock()
	return s.backupLocked(ctx)
}

func (s *Store) backupLocked(ctx context.Context) (BackupInfo, error) {
	// The files must be sound now; the copy is checked after.
	s.wmu.Lock()
	err := store.ErrClosed
	if !s.closed.Load() {
		err = s.checkFiles(ctx)
	}
	s.wmu.Unlock()
	if err != nil {
		return BackupInfo{}, fmt.Errorf("sqlite store %s: no backup taken (the previous one is kept): %w", s.path, err)
	}
	writes := s.writes.Load()
	if s.lastBackup.Path != "" && writes == s.backupWrites {
		return s.lastBackup, nil
	}
	start := time.Now()
	dir := filepath.Dir(s.path)
	tmp := filepath.Join(dir, BackupFile+".tmp")
	os.Remove(tmp)
	s.dbmu.RLock()
	if s.closed.Load() {
		err = store.ErrClosed
	} else {
		_, err = s.db.ExecContext(ctx, "VACUUM INTO ?", tmp)
	}
	s.dbmu.RUnlock()
	if err == nil {
		var info BackupInfo
		info, err = finishBackup(ctx, tmp, start)
		if err == nil {
			err = os.Rename(tmp, filepath.Join(dir, BackupFile))
		}
		if err == nil {
			err = syncDir(dir)
		}
		if err == nil {
			info.Path = filepath.Join(dir, BackupFile)
			s.lastBackup, s.backupWrites = info, writes
			s.log.Info("session store backed up", "path", info.Path, "serverSeq", info.Seq, "sessions", info.Sessions, "bytes", info.Bytes, "took", time.Since(start).Round(time.Millisecond))
			return info, nil
		}
	}
	os.Remove(tmp)
	return BackupInfo{}, fmt.Errorf("sqlite store %s: backup failed (the previous one is kept): %w", s.path, err)
}

// finishBackup checks the copy, stamps it with its time, and syncs it.
func finishBackup(ctx context.Context, path string, at time.Time) (BackupInfo, error) {
	info, err := inspect(ctx, path, func(db *sql.DB) error {
		_, err := db.ExecContext(ctx, "INSERT INTO meta (key, value) VALUES ('backup_at', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", at.UnixMilli())
		return err
	})
	if err != nil {
		return info, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return info, err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if fi, serr := os.Stat(path); serr == nil {
		info.Bytes = fi.Size()
	}
	return info, err
}

// inspect opens a database file that is not in use (a backup), runs
// quick_check, reads what it holds, and lets change run first, in
// rollback-journal mode so that it leaves no log beside the file.
func inspect(ctx context.Context, path string, change func(*sql.DB) error) (BackupInfo, error) {
	var info BackupInfo
	db, err := sql.Open("sqlite", "file:"+path+"?_journal_mode=DELETE&_busy_timeout=5000")
	if err != nil {
		return info, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if change != nil {
		if err := change(db); err != nil {
			return info, err
		}
	}
	if err := quickCheck(ctx, db); err != nil {
		return info, err
	}
	var at sql.NullInt64
	err = db.QueryRowContext(ctx, `SELECT (SELECT max(value) FROM meta WHERE key IN ('seq', 'last_action_seq')),
		(SELECT value FROM meta WHERE key = 'backup_at'), (SELECT count(*) FROM sessions)`).Scan(&info.Seq, &at, &info.Sessions)
	if err != nil {
		return info, err
	}
	if at.Valid {
		info.At = time.UnixMilli(at.Int64).UTC()
	}
	return info, db.Close()
}

// quickCheck runs SQLite's quick_check: every page readable, every
// b-tree well formed.
func quickCheck(ctx context.Context, db *sql.DB) error {
	rows, err := db.QueryContext(ctx, "PRAGMA quick_check")
	if err != nil {
		return err
	}
	defer rows.Close()
	var problems []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			return err
		}
		if line != "ok" && len(problems) < 3 {
			problems = append(problems, line)
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: quick_check: %s", store.ErrCorrupt, strings.Join(problems, "; "))
	}
	return nil
}

// backupLoop refreshes the backup every interval until stop is closed.
// Its owner is the store: Close stops it and waits for it.
func (s *Store) backupLoop(interval time.Duration, stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		if _, err := s.Backup(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("the session store's backup failed", "err", err)
		}
	}
}

// copyFileSync copies src to dst through a temporary name, syncing the
// copy and the directory.
func copyFileSync(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp := dst + ".tmp"
	out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if serr := out.Sync(); err == nil {
		err = serr
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, dst)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(dst))
}
