package protocol

// The client's typed handlers of the host's requests come from the method
// table, so they are written after data_gen.go (go generate runs the files
// of a package in name order).
//go:generate go run ../internal/gen/clientgen/cmd/clientgen -out ../client/handlers_gen.go
