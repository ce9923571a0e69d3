package ipc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// MessageType is IpcMessageType of @roo-code/types.
type MessageType string

const (
	TypeConnect     MessageType = "Connect"
	TypeDisconnect  MessageType = "Disconnect"
	TypeAck         MessageType = "Ack"
	TypeTaskCommand MessageType = "TaskCommand"
	TypeTaskEvent   MessageType = "TaskEvent"
)

// Origin is IpcOrigin: who sent a message.
type Origin string

const (
	OriginClient Origin = "client"
	OriginServer Origin = "server"
)

// Message is one IPC message (ipcMessageSchema): Ack and TaskEvent from the
// server, TaskCommand from a client.
type Message struct {
	Type          MessageType     `json:"type"`
	Origin        Origin          `json:"origin"`
	ClientID      string          `json:"clientId,omitempty"`
	RelayClientID string          `json:"relayClientId,omitempty"`
	Data          json.RawMessage `json:"data"`
}

// Ack is the server's first message to a client (ackSchema).
type Ack struct {
	ClientID string `json:"clientId"`
	PID      int    `json:"pid"`
	PPID     int    `json:"ppid"`
}

// CommandName is TaskCommandName.
type CommandName string

const (
	CommandStartNewTask CommandName = "StartNewTask"
	CommandCancelTask   CommandName = "CancelTask"
	CommandCloseTask    CommandName = "CloseTask"
	CommandResumeTask   CommandName = "ResumeTask"
	// CommandSendMessage answers the task's pending ask with a message. It
	// is not in @roo-code/types 1.63.0; later versions have it.
	CommandSendMessage CommandName = "SendMessage"
)

// Command is a TaskCommand (taskCommandSchema).
type Command struct {
	Name CommandName     `json:"commandName"`
	Data json.RawMessage `json:"data,omitempty"`
}

// StartNewTask is the data of a StartNewTask command.
type StartNewTask struct {
	Configuration json.RawMessage `json:"configuration"`
	Text          string          `json:"text"`
	Images        []string        `json:"images,omitempty"`
	NewTab        bool            `json:"newTab,omitempty"`
}

// SendMessage is the data of a SendMessage command.
type SendMessage struct {
	Text   string   `json:"text,omitempty"`
	Images []string `json:"images,omitempty"`
}

// maxImages bounds the images of one command; each is a data URI.
const maxImages = 20

// ProtocolError is a message that does not follow the protocol. The server
// logs it and drops the message, as Roo Code's server does with a message
// ipcMessageSchema rejects.
type ProtocolError struct{ Reason string }

func (e *ProtocolError) Error() string { return "ipc: " + e.Reason }

func protoErr(format string, a ...any) error {
	return &ProtocolError{Reason: fmt.Sprintf(format, a...)}
}

// DecodeMessage checks one client message the way ipcMessageSchema would,
// and returns it with its command decoded. The command's data is one of
// *StartNewTask, *SendMessage, or the task id string.
func DecodeMessage(raw json.RawMessage) (*Message, *Command, any, error) {
	var m Message
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, nil, nil, protoErr("message is not an IPC message object: %v", err)
	}
	if m.Origin != OriginClient {
		return &m, nil, nil, protoErr("origin %q: a client sends origin %q", m.Origin, OriginClient)
	}
	if m.Type != TypeTaskCommand {
		return &m, nil, nil, protoErr("message type %q: a client sends only %q", m.Type, TypeTaskCommand)
	}
	var c Command
	if err := json.Unmarshal(m.Data, &c); err != nil {
		return &m, nil, nil, protoErr("TaskCommand data is not a command object: %v", err)
	}
	switch c.Name {
	case CommandStartNewTask:
		var s StartNewTask
		if err := unmarshalObject(c.Data, &s); err != nil {
			return &m, &c, nil, protoErr("StartNewTask data: %v", err)
		}
		if !isObject(s.Configuration) {
			return &m, &c, nil, protoErr("StartNewTask needs a configuration object ({} for the defaults)")
		}
		if len(s.Images) > maxImages {
			return &m, &c, nil, protoErr("StartNewTask carries %d images, at most %d are accepted", len(s.Images), maxImages)
		}
		return &m, &c, &s, nil
	case CommandSendMessage:
		var s SendMessage
		if len(c.Data) > 0 {
			if err := unmarshalObject(c.Data, &s); err != nil {
				return &m, &c, nil, protoErr("SendMessage data: %v", err)
			}
		}
		if len(s.Images) > maxImages {
			return &m, &c, nil, protoErr("SendMessage carries %d images, at most %d are accepted", len(s.Images), maxImages)
		}
		return &m, &c, &s, nil
	case CommandCancelTask, CommandCloseTask, CommandResumeTask:
		var id string
		if err := json.Unmarshal(c.Data, &id); err != nil || id == "" {
			return &m, &c, nil, protoErr("%s data must be the task id, a non-empty string", c.Name)
		}
		return &m, &c, id, nil
	default:
		return &m, &c, nil, protoErr("unknown commandName %q", c.Name)
	}
}

func isObject(raw json.RawMessage) bool {
	var v map[string]json.RawMessage
	return json.Unmarshal(raw, &v) == nil && v != nil
}

func unmarshalObject(raw json.RawMessage, v any) error {
	if !isObject(raw) {
		return errors.New("not a JSON object")
	}
	return json.Unmarshal(raw, v)
}
