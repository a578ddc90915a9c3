package warren

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// hujson is the media type of the policy's stored text, comments and all.
const hujson = "application/hujson"

// Policy is the policy as JSON (comments dropped) with the ETag of its stored version.
type Policy struct {
	// JSON is the policy document; Decode reads it into a struct or map.
	JSON json.RawMessage
	// ETag identifies the stored version (quoted); pass it to Set as ifMatch.
	ETag string
}

// Decode unmarshals the policy document into v.
func (p *Policy) Decode(v any) error { return json.Unmarshal(p.JSON, v) }

// PolicyText is the policy's text exactly as stored (HuJSON, comments kept) with its ETag.
type PolicyText struct {
	Text string
	ETag string
}

// ValidationResult is the answer of Validate.
type ValidationResult struct {
	Valid  bool          `json:"valid"`
	Errors []PolicyError `json:"errors"`
	// Tests reports each entry of the policy's "tests" section, in document order; empty
	// when the text does not parse.
	Tests []PolicyTestResult `json:"tests"`
}

// PolicyTestResult is what became of one entry of the policy's "tests".
type PolicyTestResult struct {
	// Line is where the entry starts.
	Line int `json:"line"`
	// Src is the entry's src as written ("" when missing).
	Src    string `json:"src"`
	Passed bool   `json:"passed"`
	// Failures are the entry's problems (a broken expectation or a malformed part); each is
	// also in ValidationResult.Errors.
	Failures []PolicyError `json:"failures"`
}

// PolicyVersion is one stored version in the policy's history.
type PolicyVersion struct {
	Version   int       `json:"version"`
	ETag      string    `json:"etag"`
	Created   time.Time `json:"created"`
	CreatedBy *string   `json:"createdBy"`
}

// PolicyService covers /v1/acl.
type PolicyService struct{ c *Client }

// Get returns the policy as JSON with its ETag.
func (s *PolicyService) Get(ctx context.Context) (*Policy, error) {
	resp, err := s.c.t.do(ctx, s.c.newRequest(http.MethodGet, "/v1/acl"))
	if err != nil {
		return nil, err
	}
	return &Policy{JSON: json.RawMessage(resp.body), ETag: resp.header.Get("ETag")}, nil
}

// GetText returns the stored HuJSON text, comments and all, with its ETag.
func (s *PolicyService) GetText(ctx context.Context) (*PolicyText, error) {
	return s.text(ctx, "/v1/acl")
}

// Set replaces the policy with text (HuJSON or JSON), stored verbatim, and returns the stored
// policy with its new ETag. With a non-empty ifMatch the server refuses with 412
// precondition_failed when the policy changed since that ETag was read. An invalid policy is
// an *Error with code policy_invalid whose Errors hold each problem's line and column.
func (s *PolicyService) Set(ctx context.Context, text, ifMatch string) (*Policy, error) {
	r := s.c.newRequest(http.MethodPut, "/v1/acl")
	r.body, r.ctype = []byte(text), hujson
	if ifMatch != "" {
		r.header = http.Header{"If-Match": {ifMatch}}
	}
	resp, err := s.c.t.do(ctx, r)
	if err != nil {
		return nil, err
	}
	return &Policy{JSON: json.RawMessage(resp.body), ETag: resp.header.Get("ETag")}, nil
}

// Validate checks text as Set would, without storing anything. A policy with problems is not
// an error: the result says Valid false and lists them.
func (s *PolicyService) Validate(ctx context.Context, text string) (*ValidationResult, error) {
	r := s.c.newRequest(http.MethodPost, "/v1/acl/validate")
	r.body, r.ctype = []byte(text), hujson
	resp, err := s.c.t.do(ctx, r)
	if err != nil {
		return nil, err
	}
	var v ValidationResult
	if err := resp.decode(r, &v); err != nil {
		return nil, err
	}
	return &v, nil
}

// History returns every stored version of the policy, newest first.
func (s *PolicyService) History(ctx context.Context) ([]PolicyVersion, error) {
	var body struct {
		Versions []PolicyVersion `json:"versions"`
	}
	if err := s.c.call(ctx, http.MethodGet, "/v1/acl/history", nil, nil, &body); err != nil {
		return nil, err
	}
	return body.Versions, nil
}

// Version returns the text of one stored version exactly as it was sent, with its ETag.
func (s *PolicyService) Version(ctx context.Context, version int) (*PolicyText, error) {
	return s.text(ctx, "/v1/acl/history/"+strconv.Itoa(version))
}

func (s *PolicyService) text(ctx context.Context, path string) (*PolicyText, error) {
	r := s.c.newRequest(http.MethodGet, path)
	r.accept = hujson
	resp, err := s.c.t.do(ctx, r)
	if err != nil {
		return nil, err
	}
	return &PolicyText{Text: string(resp.body), ETag: resp.header.Get("ETag")}, nil
}
