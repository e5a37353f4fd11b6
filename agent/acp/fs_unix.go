//go:build unix

package acp

import "syscall"

// openNonBlocking makes opening a FIFO return at once instead of waiting
// for a writer; it changes nothing for regular files.
const openNonBlocking = syscall.O_NONBLOCK
