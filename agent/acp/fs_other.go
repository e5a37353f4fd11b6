//go:build !unix

package acp

const openNonBlocking = 0
