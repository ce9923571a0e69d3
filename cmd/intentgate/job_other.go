//go:build !unix && !windows

package main

// killChildrenWithUs has nothing to do where no job objects exist.
func killChildrenWithUs() {}
