// Package fileuri converts between absolute local paths and the paths of
// file: URIs, on Unix (where they are the same) and on Windows, where
// C:\Users\me is the URI path /C:/Users/me.
package fileuri
