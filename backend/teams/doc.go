// Package teams is the agent team of SPEC §6 (seeds 000 and 001): tasks
// with a state machine and dependencies, conversations and chat messages,
// the chat → task bridge with its ancestor check and audit
// (TaskChatModification), cross-session notifications delivered exactly
// once, and execution history with its log files — and the MCP tools that
// expose them on Airlock's own server.
//
// The Service holds the domain logic; Store (implemented by package store)
// persists it; Directory (implemented by authz.Service) says who the agents
// and projects are. RegisterTools puts the tools on Airlock's in-process MCP
// server, with the definitions filled into authz's one tool table (the
// levels stay the table's). Service.Responder is the pipeline's
// after-dispatch stage that attaches notifications to a task session's
// tool responses (or replaces them, for an interrupt).
//
// It imports core, authz (agents, the tool table, Check), pipeline (the
// Responder interface and tool errors) and the MCP SDK; never store,
// gateway or api.
package teams
