package npmpkg

import (
	"os"
	"path/filepath"
	"testing"
)

// TestInstallSkipsWhenInstalled: npm never runs when the package is there
// before the lock is taken or once it is held (PATH is emptied so that
// running npm would fail).
func TestInstallSkipsWhenInstalled(t *testing.T) {
	tests := []struct {
		name       string
		presentAt  int  // the call of installed that first reports true
		wantPrefix bool // whether the prefix (and its lock) is made
	}{
		{"before the lock", 1, false},
		{"while waiting for the lock", 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("PATH", "")
			prefix := filepath.Join(t.TempDir(), "p")
			calls := 0
			installed := func() bool { calls++; return calls >= tt.presentAt }
			if err := Install(prefix, "nothing@0.0.0", installed); err != nil {
				t.Fatal(err)
			}
			if calls != tt.presentAt {
				t.Errorf("installed called %d times, want %d", calls, tt.presentAt)
			}
			_, err := os.Stat(filepath.Join(prefix, ".install.lock"))
			if got := err == nil; got != tt.wantPrefix {
				t.Errorf("lock file made = %v, want %v", got, tt.wantPrefix)
			}
		})
	}
}

func TestInstallWithoutNPM(t *testing.T) {
	t.Setenv("PATH", "")
	err := Install(filepath.Join(t.TempDir(), "p"), "nothing@0.0.0", func() bool { return false })
	if err == nil || err.Error() != "npm is not installed" {
		t.Fatalf("Install = %v, want npm is not installed", err)
	}
}
