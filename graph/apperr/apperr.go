// Package apperr defines feedapi's small set of typed domain errors. Every
// layer returns these (wrapped with %w as it likes); the REST envelope and the
// GraphQL error presenter each map Code to their wire form in one table.
package apperr

import (
	"errors"
	"fmt"
)

// Code is the machine-readable error code shown to clients.
type Code string

// The codes of the contract.
const (
	BadRequest       Code = "bad_request"
	Unauthorized     Code = "unauthorized"
	QuotaExceeded    Code = "quota_exceeded" // reserved, never returned today
	ForbiddenTier    Code = "forbidden_tier"
	NotFound         Code = "not_found"
	MethodNotAllowed Code = "method_not_allowed"
	RateLimited      Code = "rate_limited"
	Internal         Code = "internal"
)

// Error is a domain error whose message is safe to show to a client.
type Error struct {
	Code    Code
	Param   string // the offending parameter or argument, if any
	Message string // client-facing; names the parameter and what is allowed
	Err     error  // optional cause, never shown to clients
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return string(e.Code) + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Invalid reports a bad value of the named parameter; the message says what is allowed.
func Invalid(param, format string, args ...any) *Error {
	return &Error{Code: BadRequest, Param: param, Message: fmt.Sprintf(format, args...)}
}

// Missing reports that no resource of the kind exists with the given id.
func Missing(kind string, id int64) *Error {
	return &Error{Code: NotFound, Message: fmt.Sprintf("%s %d not found", kind, id)}
}

// New makes an error with an explicit code and client-facing message.
func New(code Code, message string) *Error { return &Error{Code: code, Message: message} }

// As returns the domain error in err's chain, or nil when there is none
// (which callers must treat as internal).
func As(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// CodeOf returns the code of err, Internal for anything that is not a domain error.
func CodeOf(err error) Code {
	if e := As(err); e != nil {
		return e.Code
	}
	return Internal
}
