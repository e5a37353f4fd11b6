//go:build !linux

package web_test

import "errors"

func raisePriority(int) (func(), error) { return nil, errors.New("not supported on this system") }
