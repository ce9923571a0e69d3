package ipc

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// The bytes node-ipc writes for ipc.server.emit(socket, "message", {a: 1}):
// JSON.stringify({type, data}) and a form feed.
func TestEncodeMatchesNodeIPC(t *testing.T) {
	for _, tc := range []struct {
		data any
		want string
	}{
		{map[string]int{"a": 1}, "{\"type\":\"message\",\"data\":{\"a\":1}}\f"},
		{nil, "{\"type\":\"message\",\"data\":{}}\f"},           // node-ipc sends {} for absent data
		{"a\fb", "{\"type\":\"message\",\"data\":\"a\\fb\"}\f"}, // as JSON.stringify: no raw form feed inside
	} {
		b, err := Encode("message", tc.data)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want {
			t.Errorf("Encode(%v) = %q, want %q", tc.data, b, tc.want)
		}
	}
}

func TestDecoder(t *testing.T) {
	stream := "{\"type\":\"message\",\"data\":{\"x\":\"\\f\"}}\f\f{\"type\":\"other\",\"data\":1}\f"
	for name, r := range map[string]io.Reader{
		"whole":    strings.NewReader(stream),
		"one byte": iotest.OneByteReader(strings.NewReader(stream)),
	} {
		d := NewDecoder(r, 0)
		f, err := d.Next()
		if err != nil || f.Type != "message" || string(f.Data) != `{"x":"\f"}` {
			t.Errorf("%s: first = %+v, %v", name, f, err)
		}
		f, err = d.Next()
		if err != nil || f.Type != "other" || string(f.Data) != "1" {
			t.Errorf("%s: second = %+v, %v", name, f, err)
		}
		if _, err := d.Next(); err != io.EOF {
			t.Errorf("%s: end = %v, want EOF", name, err)
		}
	}
	d := NewDecoder(strings.NewReader(`{"type":"message"`), 0)
	if _, err := d.Next(); err != io.ErrUnexpectedEOF {
		t.Errorf("cut frame = %v, want ErrUnexpectedEOF", err)
	}
	d = NewDecoder(strings.NewReader("[1]\f{\"type\":\"ok\"}\f"), 0)
	var fe *FrameError
	if _, err := d.Next(); !errors.As(err, &fe) {
		t.Errorf("array frame = %v, want FrameError", err)
	}
	if f, err := d.Next(); err != nil || f.Type != "ok" {
		t.Errorf("after a bad frame = %+v, %v", f, err)
	}
	d = NewDecoder(strings.NewReader(strings.Repeat(" ", 100)+"{}\f"), 64)
	if _, err := d.Next(); err != ErrFrameTooLarge {
		t.Errorf("long frame = %v, want ErrFrameTooLarge", err)
	}
}

// FuzzDecoder: any byte stream yields frames, frame errors or an end; never
// a panic, never a frame over the limit, and every frame re-encodes to
// something that decodes to the same frame.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte("{\"type\":\"message\",\"data\":{}}\f"))
	f.Add([]byte("{\"type\":\"message\",\"data\":{\"type\":\"TaskCommand\",\"origin\":\"client\",\"clientId\":\"a\",\"data\":{\"commandName\":\"StartNewTask\",\"data\":{\"configuration\":{},\"text\":\"t\"}}}}\f"))
	f.Add([]byte("\f\f{\f"))
	f.Add([]byte("{\"type\":null}\f"))
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 512
		d := NewDecoder(bytes.NewReader(in), max)
		for i := 0; i < 1000; i++ {
			fr, err := d.Next()
			var fe *FrameError
			if errors.As(err, &fe) {
				continue
			}
			if err != nil {
				return
			}
			if len(fr.Data) > max {
				t.Fatalf("frame of %d bytes passed a %d limit", len(fr.Data), max)
			}
			b, err := Encode(fr.Type, fr.Data)
			if err != nil {
				// Data that is JSON but not re-marshalable cannot occur.
				t.Fatalf("re-encode: %v", err)
			}
			again, err := NewDecoder(bytes.NewReader(b), 0).Next()
			if err != nil || again.Type != fr.Type {
				t.Fatalf("round trip of %q: %+v, %v", b, again, err)
			}
			// Whatever the frame holds, the message checker must not panic.
			DecodeMessage(fr.Data)
			OptionsFromConfiguration(fr.Data)
		}
	})
}

func TestDecodeMessageCommands(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		want string // "" is accepted
	}{
		{`{"type":"TaskCommand","origin":"client","clientId":"a","data":{"commandName":"CancelTask","data":"t1"}}`, ""},
		{`{"type":"TaskCommand","origin":"client","clientId":"a","data":{"commandName":"SendMessage","data":{"text":"hi"}}}`, ""},
		{`{"type":"TaskCommand","origin":"client","clientId":"a","data":{"commandName":"SendMessage"}}`, ""},
		{`{"type":"TaskCommand","origin":"server","clientId":"a","data":{"commandName":"CancelTask","data":"t1"}}`, "origin"},
		{`{"type":"TaskEvent","origin":"client","data":{}}`, "type"},
		{`{"type":"TaskCommand","origin":"client","data":{"commandName":"CancelTask","data":7}}`, "task id"},
		{`{"type":"TaskCommand","origin":"client","data":{"commandName":"StartNewTask","data":{"configuration":[],"text":"x"}}}`, "configuration"},
		{`{"type":"TaskCommand","origin":"client","data":{"commandName":"StartNewTask","data":{"configuration":{},"text":"x","images":["a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a","a"]}}}`, "images"},
		{`{"type":"TaskCommand","origin":"client","data":{"commandName":"Eval","data":"x"}}`, "unknown"},
	} {
		_, _, _, err := DecodeMessage(json.RawMessage(tc.raw))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("DecodeMessage(%s) = %v, want %q", tc.raw, err, tc.want)
		}
	}
}

func TestOptionsFromConfiguration(t *testing.T) {
	for _, tc := range []struct {
		conf string
		want Options
		err  string
	}{
		{conf: `{}`},
		{conf: `{"apiProvider":"anthropic","apiModelId":"claude-x","anthropicBaseUrl":"http://h","mode":"architect"}`,
			want: Options{Provider: "anthropic", Model: "claude-x", BaseURL: "http://h", Mode: "architect"}},
		{conf: `{"apiProvider":"ollama","ollamaModelId":"qwen","ollamaBaseUrl":"http://gpu:11434/"}`,
			want: Options{Provider: "openai", Model: "qwen", BaseURL: "http://gpu:11434/v1"}},
		{conf: `{"alwaysAllowWrite":true,"alwaysAllowExecute":true}`}, // the master switch is off
		{conf: `{"autoApprovalEnabled":true,"alwaysAllowReadOnly":true,"alwaysAllowExecute":true,"alwaysAllowMcp":true,"alwaysAllowWrite":false}`,
			want: Options{AutoApprove: []string{"read", "command", "mcp"}}},
		{conf: `{"apiProvider":"vscode-lm"}`, err: "vscode-lm"},
		{conf: `{"allowedMaxRequests":-1}`, err: "allowedMaxRequests"},
		{conf: `{"allowedMaxRequests":"5"}`, err: "allowedMaxRequests"},
	} {
		got, err := OptionsFromConfiguration(json.RawMessage(tc.conf))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("OptionsFromConfiguration(%s) = %v, want an error naming %s", tc.conf, err, tc.err)
			}
			continue
		}
		if err != nil || toJSON(got) != toJSON(tc.want) {
			t.Errorf("OptionsFromConfiguration(%s) = %+v, %v, want %+v", tc.conf, got, err, tc.want)
		}
	}
}
