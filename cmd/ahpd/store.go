package main

import "flag"

// storeConfig holds the persistence settings. The host keeps its state in
// memory for now; the embedded store will add --data-dir and --store.
type storeConfig struct{}

func (c *storeConfig) defaults()                 {}
func (c *storeConfig) register(fs *flag.FlagSet) {}
func (c *storeConfig) validate() error           { return nil }
