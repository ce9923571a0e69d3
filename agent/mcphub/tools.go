package mcphub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/intentgate/intentgate/engine"
	"github.com/intentgate/intentgate/hooks"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tool names, as the model sees them.
const (
	UseToolName        = "use_mcp_tool"
	AccessResourceName = "access_mcp_resource"
)

// Status is one McpExecutionStatus of @roo-code/types: started, output,
// completed or error, for one call.
type Status struct {
	ExecutionID string `json:"executionId"`
	Status      string `json:"status"`
	ServerName  string `json:"serverName,omitempty"`
	ToolName    string `json:"toolName,omitempty"`
	Response    string `json:"response,omitempty"`
	Error       string `json:"error,omitempty"`
}

// Request is what a call asks of a server, as the approval shows it: Roo
// Code's ClineAskUseMcpServer, the text of an ask use_mcp_server.
type Request struct {
	ServerName string          `json:"serverName"`
	Type       string          `json:"type"` // use_mcp_tool or access_mcp_resource
	ToolName   string          `json:"toolName,omitempty"`
	Arguments  string          `json:"arguments,omitempty"`
	URI        string          `json:"uri,omitempty"`
	Args       json.RawMessage `json:"-"`
	// AlwaysAllowed: the settings approve this tool in advance.
	AlwaysAllowed bool `json:"-"`
	ReadOnly      bool `json:"-"`
}

// ToolOptions are the hook points of the two tools.
type ToolOptions struct {
	// Approve is asked after the policies allowed the call and before it
	// runs; nil approves. Its error refuses the call and is what the model
	// is told (a *engine.Denial passes through as is). This is where the
	// agent asks use_mcp_server unless the request is auto-approved.
	Approve func(ctx context.Context, c *engine.Call, r Request) error
	// Status is told how each call goes (nil: nobody).
	Status func(c *engine.Call, s Status)
	// MaxOutput bounds the text returned to the model (256 KiB when 0).
	MaxOutput int
}

// UseTool is the use_mcp_tool tool. It is an engine.Classifier: a call of a
// tool the server annotates read-only does not mutate; every other does.
func UseTool(h *Hub, o ToolOptions) engine.Tool { return &useTool{h: h, o: o} }

// AccessResource is the access_mcp_resource tool.
func AccessResource(h *Hub, o ToolOptions) engine.Tool { return &accessTool{h: h, o: o} }

type useTool struct {
	h *Hub
	o ToolOptions
}

type accessTool struct {
	h *Hub
	o ToolOptions
}

// toolArgs returns use_mcp_tool's "arguments": an object, or (as Roo Code's
// XML protocol sends it) a string holding one.
func toolArgs(c *engine.Call) (json.RawMessage, error) {
	raw, err := c.Arg("arguments")
	if err != nil || raw == nil || string(raw) == "null" {
		return nil, err
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return nil, nil
		}
		raw = json.RawMessage(s)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "arguments",
			Message: "arguments must be a JSON object of the MCP tool's parameters",
			Hint:    `e.g. {"server_name":"fs","tool_name":"read_file","arguments":{"path":"src/a.go"}}`}
	}
	return raw, nil
}

// Mutates: only a tool annotated read-only is let through without an
// intent; an unknown server or tool, or malformed arguments, count as
// mutating (fail closed).
func (t *useTool) Mutates(c *engine.Call) bool {
	server, _, err1 := c.String("server_name")
	tool, _, err2 := c.String("tool_name")
	if err1 != nil || err2 != nil || server == "" || tool == "" {
		return true
	}
	return !t.h.ReadOnly(context.Background(), server, tool)
}

func (t *useTool) Run(ctx context.Context, c *engine.Call) (*engine.Result, error) {
	server, err := c.Require("server_name")
	if err != nil {
		return nil, err
	}
	tool, err := c.Require("tool_name")
	if err != nil {
		return nil, err
	}
	raw, err := toolArgs(c)
	if err != nil {
		return nil, err
	}
	if _, ok := t.h.Tool(ctx, server, tool); !ok {
		return nil, unknownTool(ctx, t.h, c, server, tool)
	}
	req := Request{ServerName: server, Type: UseToolName, ToolName: tool, Args: raw,
		AlwaysAllowed: t.h.AlwaysAllowed(server, tool), ReadOnly: t.h.ReadOnly(ctx, server, tool)}
	if raw != nil {
		req.Arguments = string(raw)
	}
	if t.o.Approve != nil {
		if err := t.o.Approve(ctx, c, req); err != nil {
			return nil, err
		}
	}
	var args map[string]any
	if raw != nil {
		if err := json.Unmarshal(raw, &args); err != nil {
			return nil, err
		}
	}
	// What the call may change, looked at before and after, so the ledger
	// records it like any other change.
	var snap *snapshot
	if !req.ReadOnly {
		if snap, err = takeSnapshot(c.WS, t.h.Base(server), raw); err != nil {
			return nil, err
		}
	}
	t.status(c, Status{Status: "started", ServerName: server, ToolName: tool})
	res, err := t.h.CallTool(ctx, server, tool, args)
	var changes []engine.FileChange
	if snap != nil {
		changes = snap.changes(c.WS)
	}
	if err != nil {
		t.status(c, Status{Status: "error", Error: err.Error()})
		if len(changes) > 0 {
			// The server failed, yet files changed: the changes are recorded.
			return &engine.Result{Output: "Error: " + err.Error(), Changes: changes}, nil
		}
		return nil, fmt.Errorf("MCP server %q, tool %q: %w", server, tool, err)
	}
	out, images := callText(res)
	out = limit(out, t.o.MaxOutput)
	t.status(c, Status{Status: "output", Response: out})
	t.status(c, Status{Status: "completed", Response: out})
	r := &engine.Result{Output: out, Changes: changes, Data: map[string]any{"mcp": req}}
	if len(images) > 0 {
		r.Data["images"] = images
	}
	return r, nil
}

func (t *useTool) status(c *engine.Call, s Status) { emit(t.o, c, s) }

func emit(o ToolOptions, c *engine.Call, s Status) {
	if o.Status != nil {
		s.ExecutionID = c.ID
		o.Status(c, s)
	}
}

func unknownTool(ctx context.Context, h *Hub, c *engine.Call, server, tool string) error {
	s, err := h.server(ctx, server)
	if err != nil {
		return &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "server_name",
			Message: err.Error(), Hint: "use one of the servers listed under MCP SERVERS in the system prompt"}
	}
	return &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "tool_name",
		Message: fmt.Sprintf("MCP server %q has no tool %q", server, tool),
		Hint:    "use one of: " + strings.Join(s.toolNames(), ", ")}
}

func (t *accessTool) Run(ctx context.Context, c *engine.Call) (*engine.Result, error) {
	server, err := c.Require("server_name")
	if err != nil {
		return nil, err
	}
	uri, err := c.Require("uri")
	if err != nil {
		return nil, err
	}
	if _, err := t.h.server(ctx, server); err != nil {
		return nil, &engine.Denial{Code: engine.InvalidArgument, Tool: c.Tool, Parameter: "server_name",
			Message: err.Error(), Hint: "use one of the servers listed under MCP SERVERS in the system prompt"}
	}
	req := Request{ServerName: server, Type: AccessResourceName, URI: uri, ReadOnly: true}
	if t.o.Approve != nil {
		if err := t.o.Approve(ctx, c, req); err != nil {
			return nil, err
		}
	}
	emit(t.o, c, Status{Status: "started", ServerName: server, ToolName: AccessResourceName})
	res, err := t.h.ReadResource(ctx, server, uri)
	if err != nil {
		emit(t.o, c, Status{Status: "error", Error: err.Error()})
		return nil, fmt.Errorf("MCP server %q, resource %q: %w", server, uri, err)
	}
	var parts []string
	var images []string
	for _, rc := range res.Contents {
		switch {
		case rc.Text != "":
			parts = append(parts, rc.Text)
		case strings.HasPrefix(rc.MIMEType, "image/") && len(rc.Blob) > 0:
			images = append(images, dataURI(rc.MIMEType, rc.Blob))
		case len(rc.Blob) > 0:
			parts = append(parts, fmt.Sprintf("[binary resource %s, %s, %d bytes]", rc.URI, rc.MIMEType, len(rc.Blob)))
		}
	}
	out := strings.Join(parts, "\n\n")
	if out == "" && len(images) == 0 {
		out = "(Empty response)"
	}
	out = limit(out, t.o.MaxOutput)
	emit(t.o, c, Status{Status: "completed", Response: out})
	r := &engine.Result{Output: out, Data: map[string]any{"mcp": req}}
	if len(images) > 0 {
		r.Data["images"] = images
	}
	return r, nil
}

// callText renders a tool's result for the model as Roo Code does: the text
// blocks, embedded resources as JSON, "Error:" first when the tool failed,
// "(No response)" when there is nothing; images separately, as data URIs.
func callText(res *mcp.CallToolResult) (string, []string) {
	var parts, images []string
	for _, c := range res.Content {
		switch x := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, x.Text)
		case *mcp.ImageContent:
			images = append(images, dataURI(x.MIMEType, x.Data))
		case *mcp.EmbeddedResource:
			if x.Resource != nil {
				rc := *x.Resource
				rc.Blob = nil
				if b, err := json.Marshal(rc); err == nil {
					parts = append(parts, string(b))
				}
			}
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s: %s]", x.URI, x.Name))
		}
	}
	out := strings.Join(parts, "\n\n")
	if out == "" && len(images) == 0 {
		out = "(No response)"
	}
	if res.IsError {
		out = "Error:\n" + out
	}
	return out, images
}

func dataURI(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64Std(data)
}

func limit(s string, max int) string {
	if max <= 0 {
		max = 256 << 10
	}
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[output truncated: %d of %d bytes shown]", cut, len(s))
}

// ArgsOf tells hooks.PathArgScope which arguments of the two tools to judge:
// use_mcp_tool's "arguments", resolved against the server's directory, and
// access_mcp_resource's uri (a file: URI names a file).
func ArgsOf(h *Hub) hooks.ArgsOf {
	return func(c *engine.Call) (json.RawMessage, string, bool) {
		switch c.Tool {
		case UseToolName:
			server, _, _ := c.String("server_name")
			raw, err := toolArgs(c)
			if err != nil {
				// Unreadable arguments are judged as such: refused.
				return json.RawMessage(`{`), "", true
			}
			return raw, h.Base(server), true
		case AccessResourceName:
			server, _, _ := c.String("server_name")
			uri, _, _ := c.String("uri")
			b, _ := json.Marshal(map[string]string{"uri": uri})
			return b, h.Base(server), true
		}
		return nil, "", false
	}
}

var errNoWorkspace = errors.New("the call has no workspace")
