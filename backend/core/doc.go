// Package core holds Airlock's domain types, error codes and event names.
//
// It is the bottom of the dependency graph: it imports only the standard
// library, and every other backend package may import it.
package core
