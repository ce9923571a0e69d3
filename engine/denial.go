package engine

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Code classifies a refusal. The set is fixed by DESIGN.md and shared by every
// front door, so a model learns one vocabulary.
type Code string

const (
	NoActiveIntent   Code = "NO_ACTIVE_INTENT"
	UnknownIntent    Code = "UNKNOWN_INTENT"
	IntentNotActive  Code = "INTENT_NOT_ACTIVE"
	ScopeViolation   Code = "SCOPE_VIOLATION"
	ProtectedPath    Code = "PROTECTED_PATH"
	PathEscape       Code = "PATH_ESCAPE"
	NotRead          Code = "NOT_READ"
	StaleFile        Code = "STALE_FILE"
	MissingParameter Code = "MISSING_PARAMETER"
	InvalidArgument  Code = "INVALID_ARGUMENT"
	ToolNotAllowed   Code = "TOOL_NOT_ALLOWED"
	HookError        Code = "HOOK_ERROR"
)

// Codes lists every code, in the order DESIGN.md gives them.
func Codes() []Code {
	return []Code{NoActiveIntent, UnknownIntent, IntentNotActive, ScopeViolation, ProtectedPath,
		PathEscape, NotRead, StaleFile, MissingParameter, InvalidArgument, ToolNotAllowed, HookError}
}

// Denial is a refusal to run a call. It is modelled on os.PathError: one type
// with a code, so callers inspect it with errors.As or errors.Is against the
// sentinels below, never by matching text.
type Denial struct {
	Code           Code   `json:"error"`
	Tool           string `json:"tool,omitempty"`
	Path           string `json:"path,omitempty"`
	Intent         string `json:"intent,omitempty"`
	Message        string `json:"message"`
	Hint           string `json:"hint,omitempty"`
	ExpectedSHA256 string `json:"expected_sha256,omitempty"`
	ActualSHA256   string `json:"actual_sha256,omitempty"`
	Parameter      string `json:"parameter,omitempty"`

	// NotRecorded says why the refusal could not be recorded (the ledger
	// append failed after its retries); the refusal stands, and the front
	// door tells the person so, since a refusal is evidence.
	NotRecorded error `json:"-"`
}

func (d *Denial) Error() string {
	if d.Path != "" {
		return fmt.Sprintf("%s: %s: %s", d.Code, d.Path, d.Message)
	}
	return fmt.Sprintf("%s: %s", d.Code, d.Message)
}

// Is reports whether target is a Denial with the same code, so that
// errors.Is(err, engine.ErrStale) works for any stale-file denial.
func (d *Denial) Is(target error) bool {
	t, ok := target.(*Denial)
	return ok && t.Code == d.Code
}

// JSON is the denial as the agent sees it.
func (d *Denial) JSON() []byte {
	b, _ := json.Marshal(d)
	return b
}

// Sentinels for errors.Is.
var (
	ErrNoActiveIntent   = &Denial{Code: NoActiveIntent}
	ErrUnknownIntent    = &Denial{Code: UnknownIntent}
	ErrIntentNotActive  = &Denial{Code: IntentNotActive}
	ErrScopeViolation   = &Denial{Code: ScopeViolation}
	ErrProtectedPath    = &Denial{Code: ProtectedPath}
	ErrPathEscape       = &Denial{Code: PathEscape}
	ErrNotRead          = &Denial{Code: NotRead}
	ErrStale            = &Denial{Code: StaleFile}
	ErrMissingParameter = &Denial{Code: MissingParameter}
	ErrInvalidArgument  = &Denial{Code: InvalidArgument}
	ErrToolNotAllowed   = &Denial{Code: ToolNotAllowed}
	ErrHookError        = &Denial{Code: HookError}
)

// AsDenial returns err as a *Denial if it is one.
func AsDenial(err error) (*Denial, bool) {
	var d *Denial
	if errors.As(err, &d) {
		return d, true
	}
	return nil, false
}
