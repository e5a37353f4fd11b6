// Package jsonbench compares JSON libraries on the AHP hot path: decoding
// one JSON-RPC "action" notification carrying a chat/delta into typed
// values. It is a separate module so that the libraries it compares never
// become dependencies of the project.
//
// Run it from this folder:
//
//	go test -bench . -benchmem
package jsonbench
