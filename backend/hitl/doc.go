// Package hitl is Airlock's human-in-the-loop layer: the tool permission
// rules of seed 002 (compiled into an Engine that decides in well under a
// microsecond), the Rules service that persists them and swaps the compiled
// set atomically on every change, and the approval Broker that holds a call
// open until a person approves or declines it.
//
// It imports core, the standard library and fsnotify. Persistence goes
// through the small RuleStore and ApprovalStore interfaces declared here and
// implemented by package store.
package hitl
