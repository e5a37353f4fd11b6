// Package vscodetest holds the end-to-end test of ahpd against real VS
// Code: the web build (code-server), connected to an in-process host
// through VS Code's server-side agent host bridge, and driven in headless
// Chromium. The package has no code of its own; see vscode_test.go for
// the test, selectors_test.go for every VS Code selector it relies on, and
// docs/vscode-e2e.md for how to run it.
package vscodetest
