package files

import "syscall"

// mknodNull makes a character device node like /dev/null (1, 3) at path,
// which needs root.
func mknodNull(path string) error {
	return syscall.Mknod(path, syscall.S_IFCHR|0o666, 1<<8|3)
}
