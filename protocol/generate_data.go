package protocol

// The version, action and method tables of data_gen.go come from the spec's
// data folder. The client's typed handlers of the host's requests
// (client/handlers_gen.go) come from the method table, so they are written
// after it.
//go:generate go run ../internal/gen/gendata
//go:generate go run ../internal/gen/clientgen/cmd/clientgen -out ../client/handlers_gen.go
