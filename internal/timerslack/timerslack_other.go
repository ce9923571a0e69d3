//go:build !linux

package timerslack

import "errors"

func lookupEnv() (string, bool) { return "", false }
func unsetEnv()                 {}
func relax()                    {}
func set() func()               { return func() {} }

// Current is the calling thread's timer slack; only Linux has one.
func Current() (int, error) { return 0, errors.New("no timer slack on this system") }
