//go:build !race

package airlock_test

// raceOn: the tests run with the race detector, about ten times slower.
const raceOn = false
