package sqlite

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// DamageFile is the mark a store leaves beside its database when it finds
// its files damaged while open (see files.go): the next Open reads it and
// restores the backup rather than trust ahpd.db.
const DamageFile = "ahpd.damaged"

// writeDamageMark leaves the mark, once: the first damage found is the
// one that matters.
func writeDamageMark(dir, what string) error {
	path := filepath.Join(dir, DamageFile)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	text := fmt.Sprintf("%s %s\n", time.Now().UTC().Format(time.RFC3339), what)
	return writeFileSync(path, []byte(text))
}

// writeFileSync writes a file through a temporary name, syncs it, renames
// it in place and syncs the directory.
func writeFileSync(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}
