package procexists_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/ahp-go/ahp/internal/procexists"
)

// TestExists: this process runs; a child that has exited and been waited
// for does not.
func TestExists(t *testing.T) {
	if !procexists.Exists(os.Getpid()) {
		t.Fatal("this process does not exist")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if procexists.Exists(cmd.Process.Pid) {
		t.Errorf("process %d exists after it was waited for", cmd.Process.Pid)
	}
}
