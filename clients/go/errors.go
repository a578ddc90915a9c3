package warren

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Stable error codes of the API (the problem's `code`). Compare Error.Code with them.
const (
	CodeInvalidRequest       = "invalid_request"
	CodeUnknownField         = "unknown_field"
	CodeInvalidDuration      = "invalid_duration"
	CodeInvalidTag           = "invalid_tag"
	CodeInvalidPrefix        = "invalid_prefix"
	CodePolicyInvalid        = "policy_invalid"
	CodeUnauthenticated      = "unauthenticated"
	CodeKeyExpired           = "key_expired"
	CodeKeyRevoked           = "key_revoked"
	CodeInsufficientScope    = "insufficient_scope"
	CodePlanLimit            = "plan_limit"
	CodeNotFound             = "not_found"
	CodeInvalidState         = "invalid_state"
	CodeConflict             = "conflict"
	CodePreconditionFailed   = "precondition_failed"
	CodePayloadTooLarge      = "payload_too_large"
	CodeUnsupportedMediaType = "unsupported_media_type"
	CodePolicyTooComplex     = "policy_too_complex"
	CodeRateLimited          = "rate_limited"
	CodeInternal             = "internal"
	// CodeInvalidResponse is the client's own: a 2xx answer that is not the API's JSON.
	CodeInvalidResponse = "invalid_response"
)

// PolicyError is one problem of a refused or invalid policy, at its token.
type PolicyError struct {
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Msg    string `json:"msg"`
}

// Error is every non-2xx answer of the API: an RFC 9457 problem. Use errors.As to reach it,
// or the helpers IsNotFound, IsPreconditionFailed, IsRateLimited and ErrorCode.
type Error struct {
	// StatusCode is the HTTP status (404, 412, 429, …).
	StatusCode int
	// Code is the stable, machine-readable code (CodeNotFound, …); "http_<status>" when the
	// answer was not a problem document (a proxy's error page, say).
	Code string
	// Title is the status's short text ("Not Found").
	Title string
	// Detail is meant for people.
	Detail string
	// RequestID names the call in the server's logs and audit log.
	RequestID string
	// Errors holds each problem of a refused policy (code policy_invalid).
	Errors []PolicyError
	// Scope is the scope that was needed (code insufficient_scope).
	Scope string
	// Index is the first bad entry of a refused batch of connection reports.
	Index *int
	// RetryAfter is how long the server asked to wait (429), zero otherwise.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "warren: %d %s: %s", e.StatusCode, e.Code, e.Detail)
	for _, p := range e.Errors {
		fmt.Fprintf(&b, "; line %d, column %d: %s", p.Line, p.Column, p.Msg)
	}
	if e.RequestID != "" {
		fmt.Fprintf(&b, " (request %s)", e.RequestID)
	}
	return b.String()
}

// problem is the wire form of an RFC 9457 problem document.
type problem struct {
	Title     string        `json:"title"`
	Code      string        `json:"code"`
	Detail    string        `json:"detail"`
	RequestID string        `json:"requestId"`
	Errors    []PolicyError `json:"errors"`
	Scope     string        `json:"scope"`
	Index     *int          `json:"index"`
}

// newError turns a non-2xx answer into an *Error, whatever its body holds.
func newError(status int, header http.Header, body []byte) *Error {
	var p problem
	if json.Unmarshal(body, &p) != nil || p.Code == "" {
		detail := excerpt(body)
		if detail == "" {
			detail = http.StatusText(status)
		}
		p = problem{Title: http.StatusText(status), Code: "http_" + strconv.Itoa(status), Detail: detail}
	}
	if p.RequestID == "" {
		p.RequestID = header.Get("X-Request-Id")
	}
	return &Error{
		StatusCode: status,
		Code:       p.Code,
		Title:      p.Title,
		Detail:     p.Detail,
		RequestID:  p.RequestID,
		Errors:     p.Errors,
		Scope:      p.Scope,
		Index:      p.Index,
		RetryAfter: retryAfter(header),
	}
}

// excerpt is the start of an answer that is not a problem document, as text fit for a message:
// at most 200 bytes, never cut inside a character.
func excerpt(body []byte) string {
	text := strings.ToValidUTF8(strings.TrimSpace(string(body)), "\uFFFD")
	if len(text) <= 200 {
		return text
	}
	cut := 200
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut]
}

// retryAfter reads Retry-After as whole seconds (the form Warren sends); zero when absent.
func retryAfter(header http.Header) time.Duration {
	seconds, err := strconv.Atoi(strings.TrimSpace(header.Get("Retry-After")))
	if err != nil || seconds < 0 {
		return 0
	}
	return time.Duration(seconds) * time.Second
}

// ErrorCode returns the problem code of err when it is (or wraps) an *Error, else "".
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func hasStatus(err error, status int) bool {
	var e *Error
	return errors.As(err, &e) && e.StatusCode == status
}

// IsNotFound reports whether err is a 404: an unknown id, or one of another network.
func IsNotFound(err error) bool { return hasStatus(err, http.StatusNotFound) }

// IsPreconditionFailed reports whether err is a 412: the policy changed since its ETag was read.
func IsPreconditionFailed(err error) bool { return hasStatus(err, http.StatusPreconditionFailed) }

// IsRateLimited reports whether err is a 429 that was still refused after the retries.
func IsRateLimited(err error) bool { return hasStatus(err, http.StatusTooManyRequests) }
