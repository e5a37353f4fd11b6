package storereader

import "golang.org/x/sys/unix"

// backgroundPriority is the nice value of the store reader's thread: the
// lowest, so the reads run in the time everything else leaves.
const backgroundPriority = 19

// backgroundThread lowers the calling thread, alone, to background
// priority (on Linux a thread's nice value is its own).
func backgroundThread() error {
	return unix.Setpriority(unix.PRIO_PROCESS, unix.Gettid(), backgroundPriority)
}
