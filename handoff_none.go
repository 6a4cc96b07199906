//go:build headless || !unix

package main

// handOff does nothing in the headless build (it is what the desktop build
// hands commands to) and where exec is not available.
func handOff([]string) {}
