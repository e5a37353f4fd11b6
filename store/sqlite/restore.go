package sqlite

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ahp-go/ahp/store"
)

// openOrRestore opens the database at path, restoring the backup first
// when the database cannot be trusted: missing or empty where a store was
// kept, marked damaged by the last run, or failing its check. marked says
// whether the lock file showed a store was kept in the directory. The
// caller holds the directory lock.
func openOrRestore(path, dsn string, lock *os.File, log *slog.Logger, marked, clean bool) (*Store, error) {
	dir := filepath.Dir(path)
	backup := filepath.Join(dir, BackupFile)
	reason, markText := distrust(path, marked)
	if reason == "" {
		s, err := openDB(path, dsn, lock, log, clean)
		if err == nil || !errors.Is(err, store.ErrCorrupt) {
			return s, err
		}
		if _, serr := os.Stat(backup); serr != nil {
			return nil, fmt.Errorf("%w (and there is no backup %s to restore)", err, BackupFile)
		}
		reason = err.Error()
	}
	if _, err := os.Stat(backup); err != nil {
		if markText != "" && fileSize(path) > 0 {
			// Damage was found, but there is nothing better than the
			// database: open it if it passes its check.
			s, err := openDB(path, dsn, lock, log, false)
			if err != nil {
				return nil, fmt.Errorf("%w (the last run found its files damaged: %s; there is no backup to restore)", err, markText)
			}
			log.Error("the last run found the session store's files damaged and there is no backup: opened the database as it is; changes saved after its last checkpoint may be lost",
				"path", path, "damage", markText)
			os.Remove(filepath.Join(dir, DamageFile))
			return s, nil
		}
		return nil, fmt.Errorf("sqlite store %s: %w: %s, and there is no backup %s to restore; refusing to start an empty store over it (move the directory's files away to start afresh)", path, store.ErrCorrupt, reason, BackupFile)
	}
	ctx := context.Background()
	info, err := inspect(ctx, backup, nil)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %w: %s, and the backup %s cannot be used either: %w", path, store.ErrCorrupt, reason, backup, err)
	}
	aside, err := moveAside(path, time.Now())
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %s; moving the damaged files aside to restore the backup failed: %w", path, reason, err)
	}
	if err := copyFileSync(backup, path); err != nil {
		return nil, fmt.Errorf("sqlite store %s: %s; copying the backup %s failed: %w", path, reason, backup, err)
	}
	s, err := openDB(path, dsn, lock, log, false)
	if err != nil {
		return nil, fmt.Errorf("sqlite store %s: %s; the restored backup does not open: %w", path, reason, err)
	}
	// serverSeq values issued after the backup must never come again.
	seq := info.Seq + restoreSeqGap
	if _, err := s.db.ExecContext(ctx, "UPDATE meta SET value = max(value, ?) WHERE key = 'seq'", seq); err != nil {
		s.Close()
		return nil, s.wrap("restore", err)
	}
	os.Remove(filepath.Join(dir, DamageFile))
	log.Error("the session store was restored from its backup: changes saved after the backup was taken are lost",
		"reason", reason, "backup", backup, "backupTakenAt", info.At.Format(time.RFC3339), "backupServerSeq", info.Seq,
		"sessions", info.Sessions, "lost", "everything saved after "+info.At.Format(time.RFC3339)+" (serverSeq above "+fmt.Sprint(info.Seq)+")",
		"keptAside", strings.Join(aside, " "), "nextServerSeq", seq+1)
	return s, nil
}

// distrust says why the database at path cannot be opened as it is (""
// when it can be tried), and the text of the last run's damage mark.
func distrust(path string, marked bool) (reason, markText string) {
	dir := filepath.Dir(path)
	if b, err := os.ReadFile(filepath.Join(dir, DamageFile)); err == nil {
		markText = strings.TrimSpace(string(b))
		return "the last run found its files damaged (" + markText + ")", markText
	}
	kept := func() string {
		if marked {
			return "the lock file " + LockFile + " shows a store was kept here"
		}
		if n := fileSize(walPath(path)); n > 0 {
			return fmt.Sprintf("a write-ahead log of %d bytes is beside it", n)
		}
		if fileSize(filepath.Join(dir, BackupFile)) > 0 {
			return "the backup " + BackupFile + " is beside it"
		}
		return ""
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if why := kept(); why != "" {
			return "the database file is missing but " + why, ""
		}
	case err == nil && st.Size() == 0:
		if why := kept(); why != "" {
			return "the database file is empty but " + why, ""
		}
	}
	return "", ""
}

// fileSize is the size of the file at path, or -1.
func fileSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return -1
	}
	return st.Size()
}

// moveAside renames the database and its log, where they exist, to names
// that carry the time, so that nothing is deleted; the shared-memory
// index, which SQLite rebuilds, is removed. It returns the new names.
func moveAside(path string, now time.Time) ([]string, error) {
	stamp := now.UTC().Format("20060102T150405Z")
	base := strings.TrimSuffix(path, ".db") + "-damaged-" + stamp + ".db"
	var moved []string
	for _, suffix := range []string{"", "-wal"} {
		from, to := path+suffix, base+suffix
		if err := os.Rename(from, to); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return moved, err
		}
		moved = append(moved, filepath.Base(to))
	}
	if err := os.Remove(path + "-shm"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return moved, err
	}
	return moved, syncDir(filepath.Dir(path))
}
