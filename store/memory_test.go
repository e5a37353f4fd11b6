package store_test

import (
	"testing"

	"github.com/ahp-go/ahp/store"
	"github.com/ahp-go/ahp/store/storetest"
)

func TestMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return store.NewMemory() })
}
