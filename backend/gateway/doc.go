// Package gateway is Airlock's MCP gateway: it supervises the downstream MCP
// servers (one shared process or connection per server), serves agents over
// Streamable HTTP and legacy SSE, and runs every tool call through one
// pipeline of named stages (identify → gate → policy → decide → approve →
// dispatch → audit).
//
// It imports core and the MCP SDK; authorization, built-in policies and
// human approval plug into the pipeline through the small interfaces in
// pipeline.go, so this package does not import hitl or store.
package gateway
