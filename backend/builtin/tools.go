package builtin

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
)

// Version is the built-in servers' version in their MCP implementation info.
const Version = "1.0.0"

// The tool definitions of seed 004: names, descriptions, input and output
// schemas and annotations. The descriptions are the seed's, in English like
// the rest of Airlock. Unknown arguments are refused (additionalProperties);
// file_read's result also says how its content is encoded.
const (
	fileReadInput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file to read: absolute, or relative to an allowed root folder."}
  },
  "required": ["path"],
  "additionalProperties": false
}`
	fileReadOutput = `{
  "type": "object",
  "properties": {
    "content": {"type": "string", "description": "The content of the file."},
    "mimeType": {"type": "string", "description": "The MIME type sniffed from the content."},
    "encoding": {"type": "string", "enum": ["utf-8", "base64"], "description": "utf-8 for text; base64 for a binary type the user allowed."}
  },
  "required": ["content"]
}`
	fileWriteInput = `{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Path of the file to write: absolute, or relative to an allowed root folder."},
    "content": {"type": "string", "description": "The content to write to the file."},
    "overwrite": {"type": "boolean", "description": "Whether to overwrite an existing file. If false, an existing file is an error.", "default": false}
  },
  "required": ["path", "content"],
  "additionalProperties": false
}`
	fileWriteOutput = `{
  "type": "object",
  "properties": {
    "success": {"type": "boolean", "description": "Whether the write succeeded."}
  },
  "required": ["success"]
}`
	shellExecInput = `{
  "type": "object",
  "properties": {
    "command": {"type": "string", "description": "The shell command to run."},
    "args": {"type": "array", "items": {"type": "string"}, "description": "Arguments passed to the command.", "default": []},
    "cwd": {"type": "string", "description": "Working directory of the command: absolute, or relative to an allowed root folder. Defaults to the first allowed root folder."}
  },
  "required": ["command"],
  "additionalProperties": false
}`
	shellExecOutput = `{
  "type": "object",
  "properties": {
    "stdout": {"type": "string", "description": "The command's standard output."},
    "stderr": {"type": "string", "description": "The command's standard error output."},
    "exitCode": {"type": "number", "description": "The command's exit code."}
  },
  "required": ["stdout", "stderr", "exitCode"]
}`
)

func boolPtr(b bool) *bool { return &b }

// Tools returns the three tool definitions by server id, as the servers
// list them.
func Tools() map[string]*mcp.Tool {
	return map[string]*mcp.Tool{
		ServerFileRead: {
			Name:         ToolFileRead,
			Description:  "Reads the file at the given path and returns its content.",
			InputSchema:  json.RawMessage(fileReadInput),
			OutputSchema: json.RawMessage(fileReadOutput),
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: boolPtr(false)},
		},
		ServerFileWrite: {
			Name:         ToolFileWrite,
			Description:  "Creates or overwrites the file at the given path and writes the content to it.",
			InputSchema:  json.RawMessage(fileWriteInput),
			OutputSchema: json.RawMessage(fileWriteOutput),
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: boolPtr(true), IdempotentHint: false, OpenWorldHint: boolPtr(false)},
		},
		ServerShellExec: {
			Name:         ToolShellExec,
			Description:  "Runs the given shell command and returns its standard output and standard error output.",
			InputSchema:  json.RawMessage(shellExecInput),
			OutputSchema: json.RawMessage(shellExecOutput),
			Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: false, DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(true)},
		},
	}
}

// newServers builds the three in-process servers. Each handler decodes its
// arguments strictly and loads the settings once per call.
func (b *Builtin) newServers() map[string]*mcp.Server {
	tools := Tools()
	mk := func(id string) *mcp.Server {
		return mcp.NewServer(&mcp.Implementation{Name: "airlock-" + id, Title: "Airlock " + id, Version: Version}, nil)
	}
	read := mk(ServerFileRead)
	mcp.AddTool(read, tools[ServerFileRead], func(ctx context.Context, _ *mcp.CallToolRequest, in json.RawMessage) (*mcp.CallToolResult, any, error) {
		args, err := parseReadArgs(in)
		if err != nil {
			return pipeline.ErrorResult(err), nil, nil
		}
		out, err := b.readFile(ctx, args)
		if err != nil {
			return pipeline.ErrorResult(err), nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{out.content()}}, out.res, nil
	})
	write := mk(ServerFileWrite)
	mcp.AddTool(write, tools[ServerFileWrite], func(ctx context.Context, _ *mcp.CallToolRequest, in json.RawMessage) (*mcp.CallToolResult, any, error) {
		args, err := parseWriteArgs(in)
		if err != nil {
			return pipeline.ErrorResult(err), nil, nil
		}
		res, err := b.WriteFile(ctx, args)
		if err != nil {
			return pipeline.ErrorResult(err), nil, nil
		}
		return nil, res, nil
	})
	shell := mk(ServerShellExec)
	mcp.AddTool(shell, tools[ServerShellExec], func(ctx context.Context, _ *mcp.CallToolRequest, in json.RawMessage) (*mcp.CallToolResult, any, error) {
		args, err := parseExecArgs(in)
		if err != nil {
			return pipeline.ErrorResult(err), nil, nil
		}
		res, err := b.Exec(ctx, args)
		if err != nil {
			return pipeline.ErrorResult(err), nil, nil
		}
		if res.TimedOut {
			// A tool error, so that Activity shows it as one, with the
			// output so far: the agent may still use it.
			e := core.Errorf(ECommandTimeout, "the command ran longer than %d s; its process group was killed", b.Settings().ShellTimeoutSeconds).
				WithHint("raise the shell timeout in Airlock's Built-in tools settings, or run less at once")
			body, _ := json.Marshal(res)
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}},
				StructuredContent: res, Meta: mcp.Meta{"airlock/error": e}}, nil, nil
		}
		return nil, res, nil
	})
	return map[string]*mcp.Server{ServerFileRead: read, ServerFileWrite: write, ServerShellExec: shell}
}
