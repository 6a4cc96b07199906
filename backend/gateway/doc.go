// Package gateway is Airlock's MCP transport layer: it serves agents over
// Streamable HTTP and legacy SSE, checks every HTTP request's credential
// (gate 1) and that a session is used only by the credential that opened it,
// answers listings from the catalog filtered for the caller of each request,
// and hands every tools/call, prompts/get and resources/read to the pipeline.
//
// Agents of the 2025-11-25 revision (and older) have sessions
// (gateway.go); agents of the 2026-07-28 revision have none, and get the
// sampling and elicitation requests of downstream servers as input
// requests (stateless.go, mrtr.go).
//
// It imports core, catalog, pipeline and the MCP SDK. Who a caller is and
// what it may see come from the small interfaces in gateway.go.
package gateway
