//go:build race

package main

// raceBuild: the tests were built with the race detector, and so is the
// ahpd they build (sharing the build cache).
const raceBuild = true
