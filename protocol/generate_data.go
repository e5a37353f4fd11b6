package protocol

// The version, action and method tables of data_gen.go come from the spec's
// data folder.
//go:generate go run ../internal/gen/gendata
