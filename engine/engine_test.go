package engine_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/intentgate/intentgate/engine"
)

func newEngine(t testing.TB) (*engine.Engine, *[]string) {
	var log []string
	reg := engine.NewRegistry()
	reg.Register(engine.Spec{Name: "echo", Group: engine.GroupRead,
		Tool: engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
			log = append(log, "tool")
			return &engine.Result{Output: "ran"}, nil
		})})
	e := engine.New(reg)
	return e, &log
}

// The order in which a call meets the hooks: pre-hooks in order, the tool,
// post-hooks in order.
func ExampleEngine_Dispatch() {
	reg := engine.NewRegistry()
	reg.Register(engine.Spec{Name: "echo", Group: engine.GroupRead,
		Tool: engine.ToolFunc(func(ctx context.Context, c *engine.Call) (*engine.Result, error) {
			fmt.Println("tool")
			return &engine.Result{Output: "ok"}, nil
		})})
	e := engine.New(reg)
	for _, name := range []string{"gatekeeper", "scope"} {
		e.Use(engine.PreFunc(func(ctx context.Context, c *engine.Call) error {
			fmt.Println("pre", name)
			return nil
		}))
	}
	for _, name := range []string{"trace", "intentmap"} {
		e.After(engine.PostFunc(func(ctx context.Context, c *engine.Call, r *engine.Result) error {
			fmt.Println("post", name)
			return nil
		}))
	}
	r, err := e.Dispatch(context.Background(), &engine.Call{Tool: "echo"})
	fmt.Println(r.Output, err)
	// Output:
	// pre gatekeeper
	// pre scope
	// tool
	// post trace
	// post intentmap
	// ok <nil>
}

type observer struct{ got []*engine.Denial }

func (o *observer) Denied(ctx context.Context, c *engine.Call, d *engine.Denial) error {
	o.got = append(o.got, d)
	return nil
}

func TestPreHookFailuresDeny(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook engine.PreFunc
		want engine.Code
	}{
		{"denial", func(context.Context, *engine.Call) error {
			return &engine.Denial{Code: engine.ScopeViolation, Message: "no"}
		}, engine.ScopeViolation},
		{"plain error", func(context.Context, *engine.Call) error { return errors.New("disk on fire") }, engine.HookError},
		{"panic", func(context.Context, *engine.Call) error { panic("bug") }, engine.HookError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, log := newEngine(t)
			obs := &observer{}
			e.OnDenial(obs)
			e.Use(tc.hook)
			r, err := e.Dispatch(context.Background(), &engine.Call{Tool: "echo", Intent: "INT-1"})
			d, ok := engine.AsDenial(err)
			if !ok || d.Code != tc.want || r != nil {
				t.Fatalf("Dispatch = %v, %v; want a %s denial", r, err, tc.want)
			}
			if d.Tool != "echo" || d.Intent != "INT-1" {
				t.Errorf("denial = %+v, want tool and intent filled in", d)
			}
			if len(*log) != 0 {
				t.Errorf("the tool ran after a refusal")
			}
			if len(obs.got) != 1 || obs.got[0] != d {
				t.Errorf("observer got %v, want the denial once", obs.got)
			}
			if !errors.Is(err, &engine.Denial{Code: tc.want}) {
				t.Errorf("errors.Is(%v, %s sentinel) = false", err, tc.want)
			}
		})
	}
}

func TestFirstDenialStopsTheChain(t *testing.T) {
	e, _ := newEngine(t)
	second := false
	e.Use(engine.PreFunc(func(context.Context, *engine.Call) error {
		return &engine.Denial{Code: engine.NoActiveIntent}
	}), engine.PreFunc(func(context.Context, *engine.Call) error {
		second = true
		return nil
	}))
	if err := e.Authorize(context.Background(), &engine.Call{Tool: "echo"}); !errors.Is(err, engine.ErrNoActiveIntent) {
		t.Fatalf("Authorize = %v, want NO_ACTIVE_INTENT", err)
	}
	if second {
		t.Error("the second pre-hook ran after the first refused")
	}
}

func TestPostErrorsKeepTheResult(t *testing.T) {
	e, _ := newEngine(t)
	ran := 0
	e.After(engine.PostFunc(func(context.Context, *engine.Call, *engine.Result) error {
		ran++
		return errors.New("ledger full")
	}), engine.PostFunc(func(context.Context, *engine.Call, *engine.Result) error {
		ran++
		panic("bug")
	}))
	r, err := e.Dispatch(context.Background(), &engine.Call{Tool: "echo"})
	var pe *engine.PostError
	if !errors.As(err, &pe) || len(pe.Errs) != 2 {
		t.Fatalf("Dispatch error = %v, want a PostError with both failures", err)
	}
	if r == nil || r.Output != "ran" || ran != 2 {
		t.Errorf("result = %v, post-hooks run = %d; want the tool's result and both hooks run", r, ran)
	}
}

func TestUnknownToolIsRefused(t *testing.T) {
	e, _ := newEngine(t)
	_, err := e.Dispatch(context.Background(), &engine.Call{Tool: "nope"})
	if !errors.Is(err, engine.ErrInvalidArgument) {
		t.Fatalf("Dispatch(unknown) = %v, want INVALID_ARGUMENT", err)
	}
}

func TestCallArguments(t *testing.T) {
	c := &engine.Call{Tool: "t", Args: []byte(`{"s":"x","n":3,"b":true,"o":{},"z":null}`)}
	for _, tc := range []struct {
		name   string
		want   string
		ok     bool
		errHas engine.Code
	}{
		{"s", "x", true, ""},
		{"n", "3", true, ""},
		{"b", "true", true, ""},
		{"z", "", false, ""},
		{"missing", "", false, ""},
		{"o", "", false, engine.InvalidArgument},
	} {
		got, ok, err := c.String(tc.name)
		if got != tc.want || ok != tc.ok || (tc.errHas == "") != (err == nil) {
			t.Errorf("String(%q) = %q, %v, %v; want %q, %v, code %q", tc.name, got, ok, err, tc.want, tc.ok, tc.errHas)
		}
	}
	if _, err := c.Require("missing"); !errors.Is(err, engine.ErrMissingParameter) {
		t.Errorf("Require(missing) = %v, want MISSING_PARAMETER", err)
	}
	bad := &engine.Call{Tool: "t", Args: []byte(`[1]`)}
	if _, _, err := bad.String("x"); !errors.Is(err, engine.ErrInvalidArgument) {
		t.Errorf("String on array args = %v, want INVALID_ARGUMENT", err)
	}
}

type failingObserver struct{ err error }

func (o failingObserver) Denied(context.Context, *engine.Call, *engine.Denial) error { return o.err }

// A refusal that cannot be recorded still refuses, and says why it was not
// recorded instead of dropping the failure.
func TestUnrecordedDenialIsSurfaced(t *testing.T) {
	e, _ := newEngine(t)
	e.Use(engine.PreFunc(func(ctx context.Context, c *engine.Call) error {
		return &engine.Denial{Code: engine.ScopeViolation, Message: "no"}
	}))
	full := errors.New("disk full")
	e.OnDenial(failingObserver{full}, failingObserver{nil})
	_, err := e.Dispatch(context.Background(), &engine.Call{Tool: "echo"})
	d, ok := engine.AsDenial(err)
	if !ok || d.Code != engine.ScopeViolation {
		t.Fatalf("Dispatch = %v, want the SCOPE_VIOLATION refusal", err)
	}
	if !errors.Is(d.NotRecorded, full) {
		t.Errorf("NotRecorded = %v, want the observer's error", d.NotRecorded)
	}
	if string(d.JSON()) != `{"error":"SCOPE_VIOLATION","tool":"echo","message":"no"}` {
		t.Errorf("JSON = %s: the agent's view must not change", d.JSON())
	}
}
