// Package authz is Airlock's identity and authorization (SPEC §5, seeds 000
// and 003): agents in a hierarchy with projects, roles and tokens; sessions
// opened by authenticate and bound to MCP sessions; the permission levels of
// Airlock's own tools (one table, Registry) with the seed's messages; server
// grants, tool permissions and per-agent toggles for downstream tools with
// the deny reasons suspended → not_subscribed → user_disabled; a per-agent
// permission cache; the help tool; and the compact-mode checks.
//
// One function decides (Service.Check): the pipeline's gate (Authorize), the
// gateway's listing filter and help all call it, so they cannot disagree.
//
// It imports core, pipeline (for the Gate interface and tool errors) and the
// MCP SDK; its storage is the Store interface, implemented by package store.
package authz
