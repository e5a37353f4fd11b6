// Package protocol holds the Agent Host Protocol wire types and the small
// amount of hand-written code around them.
//
// Most types are generated from the protocol's JSON Schemas by wiregen
// (internal/gen/wiregen; see its README for the mapping rules) into the
// *_gen.go files. Every generated type encodes and decodes itself with
// github.com/go-json-experiment/json, so both [Marshal] / [Unmarshal] here
// and that package's functions work on them:
//
//	var env protocol.ActionEnvelope
//	if err := protocol.Unmarshal(data, &env); err != nil { ... }
//	switch a := env.Action.(type) {
//	case *protocol.ChatDeltaAction:
//		fmt.Print(a.Content)
//	case *protocol.Unknown:
//		// an action from a newer protocol version; skip it
//	}
//
// Unions are Go interfaces whose values are pointers to the variant
// structs; a variant this package does not know decodes as [*Unknown] and
// encodes again unchanged.
package protocol

//go:generate go run ../internal/gen/wiregen/cmd/wiregen
