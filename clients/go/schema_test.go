package warren_test

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	warren "github.com/warrenhq/warren/clients/go"
)

// enums maps each enumeration of the document (a record, then the property path, "[]" for a
// list's items) to the Go type that names its values.
var enums = []struct {
	record, path, goType string
}{
	{"Route", "state", "RouteState"},
	{"Device", "routes.[].state", "RouteState"},
	{"Device", "protocol", "Protocol"},
	{"User", "role", "Role"},
	{"Key", "type", "KeyType"},
	{"Key", "state", "KeyState"},
	{"Key", "scopes.[]", "Scope"},
	{"Me", "scopes.[]", "Scope"},
	{"Event", "type", "EventType"},
	{"Event", "actor.type", "ActorType"},
	{"WebhookDelivery", "type", "EventType"},
	{"WebhookDelivery", "state", "DeliveryState"},
}

// TestEnumerationsAreComplete checks that each enumeration's field has its named type and that
// the type has a constant for every value of the document, and none besides.
func TestEnumerationsAreComplete(t *testing.T) {
	doc := readOpenAPI(t)
	constants := constantsByType(t)
	for _, e := range enums {
		s := resolve(doc, doc.Components.Schemas[e.record])
		typ := reflect.TypeOf(records[e.record])
		for _, step := range strings.Split(e.path, ".") {
			if step == "[]" {
				s, typ = resolve(doc, s.Items), typ.Elem()
				continue
			}
			field, ok := jsonFields(typ)[step]
			if !ok {
				t.Fatalf("%s.%s: no field %s in %s", e.record, e.path, step, typ)
			}
			s, typ = resolve(doc, s.Properties[step]), field.Type
		}
		if typ.Name() != e.goType {
			t.Errorf("%s.%s is a %s, not a %s", e.record, e.path, typ, e.goType)
		}
		var want []string
		for _, v := range s.Enum {
			want = append(want, v.(string))
		}
		got := constants[e.goType]
		slices.Sort(want)
		slices.Sort(got)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s.%s: the document has %v, the constants of %s are %v", e.record, e.path, want, e.goType, got)
		}
	}
}

// constantsByType reads the package's source for its typed string constants.
func constantsByType(t *testing.T) map[string][]string {
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gen, ok := decl.(*ast.GenDecl)
			if !ok || gen.Tok != token.CONST {
				continue
			}
			for _, spec := range gen.Specs {
				v := spec.(*ast.ValueSpec)
				typ, ok := v.Type.(*ast.Ident)
				if !ok {
					continue
				}
				for _, value := range v.Values {
					if lit, ok := value.(*ast.BasicLit); ok && lit.Kind == token.STRING {
						text, _ := strconv.Unquote(lit.Value)
						out[typ.Name] = append(out[typ.Name], text)
					}
				}
			}
		}
	}
	return out
}

// schema is the part of a JSON Schema (as docs/openapi.json writes them) the checks below read.
type schema struct {
	Ref        string             `json:"$ref"`
	Type       any                `json:"type"` // a name, or a list of names such as ["string", "null"]
	Format     string             `json:"format"`
	Enum       []any              `json:"enum"`
	Properties map[string]*schema `json:"properties"`
	Items      *schema            `json:"items"`
	AnyOf      []*schema          `json:"anyOf"`
	OneOf      []*schema          `json:"oneOf"`
}

type openAPIDocument struct {
	Paths map[string]map[string]struct {
		OperationID string `json:"operationId"`
		Parameters  []struct {
			Name string `json:"name"`
			In   string `json:"in"`
		} `json:"parameters"`
		RequestBody struct {
			Content map[string]struct {
				Schema *schema `json:"schema"`
			} `json:"content"`
		} `json:"requestBody"`
		Responses map[string]struct {
			Content map[string]struct {
				Schema *schema `json:"schema"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]*schema `json:"schemas"`
	} `json:"components"`
}

func readOpenAPI(t *testing.T) *openAPIDocument {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc openAPIDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// The records each component schema decodes into.
var records = map[string]any{
	"UserRef":          warren.UserRef{},
	"Device":           warren.Device{},
	"User":             warren.User{},
	"Network":          warren.Network{},
	"Key":              warren.Key{},
	"Route":            warren.Route{},
	"ConnectionEntry":  warren.ConnectionEntry{},
	"AuditEntry":       warren.AuditEntry{},
	"ValidationResult": warren.ValidationResult{},
	"Peer":             warren.Peer{},
	"Netmap":           warren.Netmap{},
	"Event":            warren.Event{},
	"Webhook":          warren.Webhook{},
	"WebhookDelivery":  warren.WebhookDelivery{},
	"SsoConfig":        warren.SSO{},
	"Me":               warren.Me{},
}

// The answers and request bodies, by operation, that are not one component record.
var (
	answers = map[string]any{
		// "listDevices":           warren.DevicePage{},
		"listConnectionLog":     warren.Page[warren.ConnectionEntry]{},
		"listAuditLog":          warren.Page[warren.AuditEntry]{},
		"listEvents":            warren.Page[warren.Event]{},
		"listWebhookDeliveries": warren.Page[warren.WebhookDelivery]{},
		"registerNode":          warren.Registration{},
		"heartbeat":             warren.HeartbeatResult{},
	}
	bodies = map[string]any{
		"updateNetwork":     warren.NetworkUpdate{},
		"setSso":            warren.SetSSORequest{},
		"createUser":        warren.CreateUserRequest{},
		"updateUser":        warren.UpdateUserRequest{},
		"createKey":         warren.CreateKeyRequest{},
		"createWebhook":     warren.CreateWebhookRequest{},
		"updateWebhook":     warren.UpdateWebhookRequest{},
		"updateDevice":      warren.DeviceUpdate{},
		"setDeviceTags":     struct{}{}, // SetTags takes the list itself
		"registerNode":      warren.RegisterRequest{},
		"heartbeat":         warren.HeartbeatRequest{},
		"reportConnections": struct{}{}, // ReportConnections takes the entries themselves
	}
)

// TestRecordsHaveEveryField walks each record of the document beside the Go type it decodes
// into: every property must be a field (nested objects too), a nullable property a pointer (or
// a slice or map, whose nil is null), and a date-time a time.Time.
func TestRecordsHaveEveryField(t *testing.T) {
	doc := readOpenAPI(t)
	for name, record := range records {
		s := doc.Components.Schemas[name]
		if s == nil {
			t.Errorf("docs/openapi.json has no schema %s", name)
			continue
		}
		compare(t, doc, name, s, reflect.TypeOf(record), true)
	}
	for name := range doc.Components.Schemas {
		if _, ok := records[name]; !ok && name != "Problem" {
			t.Errorf("schema %s has no record in the client", name)
		}
	}
	for id, answer := range answers {
		compare(t, doc, id, answerSchema(t, doc, id), reflect.TypeOf(answer), true)
	}
}

// TestRequestBodiesHaveEveryField checks that every field of every request body can be sent.
func TestRequestBodiesHaveEveryField(t *testing.T) {
	doc := readOpenAPI(t)
	for path, methods := range doc.Paths {
		for method, op := range methods {
			content, ok := op.RequestBody.Content["application/json"]
			if !ok || content.Schema == nil || len(resolve(doc, content.Schema).Properties) == 0 {
				continue
			}
			body, ok := bodies[op.OperationID]
			if !ok {
				t.Errorf("%s %s (%s): no request type mapped", method, path, op.OperationID)
				continue
			}
			if reflect.TypeOf(body).NumField() == 0 {
				continue
			}
			compare(t, doc, op.OperationID, content.Schema, reflect.TypeOf(body), false)
		}
	}
}

func answerSchema(t *testing.T, doc *openAPIDocument, operationID string) *schema {
	for _, methods := range doc.Paths {
		for _, op := range methods {
			if op.OperationID != operationID {
				continue
			}
			for status, r := range op.Responses {
				if strings.HasPrefix(status, "2") {
					if c, ok := r.Content["application/json"]; ok {
						return c.Schema
					}
				}
			}
		}
	}
	t.Fatalf("no JSON answer for %s", operationID)
	return nil
}

func resolve(doc *openAPIDocument, s *schema) *schema {
	for s != nil && s.Ref != "" {
		s = doc.Components.Schemas[strings.TrimPrefix(s.Ref, "#/components/schemas/")]
	}
	return s
}

// nullable reports whether the schema admits null, and the schema of its other values.
func nullable(doc *openAPIDocument, s *schema) (bool, *schema) {
	s = resolve(doc, s)
	if names, ok := s.Type.([]any); ok {
		for _, n := range names {
			if n == "null" {
				return true, s
			}
		}
	}
	for _, options := range [][]*schema{s.AnyOf, s.OneOf} {
		var other *schema
		null := false
		for _, o := range options {
			if o = resolve(doc, o); o.Type == "null" {
				null = true
			} else {
				other = o
			}
		}
		if null {
			return true, other
		}
	}
	return false, s
}

var (
	timeType     = reflect.TypeOf(time.Time{})
	rawJSONType  = reflect.TypeOf(json.RawMessage{})
	marshalerTyp = reflect.TypeOf((*json.Marshaler)(nil)).Elem()
)

// compare checks the Go type typ against s; decoding says whether typ is read from answers
// (where a nullable property needs a type that holds null and a time must be parsed).
func compare(t *testing.T, doc *openAPIDocument, where string, s *schema, typ reflect.Type, decoding bool) {
	t.Helper()
	isNull, s := nullable(doc, s)
	if s == nil {
		return
	}
	if decoding && isNull {
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
		default:
			t.Errorf("%s is nullable but decodes into %s, which cannot hold null", where, typ)
		}
	}
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	if decoding && s.Format == "date-time" && typ != timeType {
		t.Errorf("%s is a date-time but decodes into %s", where, typ)
	}
	if s.Items != nil && typ.Kind() == reflect.Slice && typ != rawJSONType {
		compare(t, doc, where+"[]", s.Items, typ.Elem(), decoding)
		return
	}
	if len(s.Properties) == 0 || typ.Kind() != reflect.Struct || typ == timeType {
		return // free-form objects (maps, json.RawMessage) take whatever comes
	}
	if !decoding && reflect.PointerTo(typ).Implements(marshalerTyp) {
		return // writes itself
	}
	fields := jsonFields(typ)
	for name, property := range s.Properties {
		field, ok := fields[name]
		if !ok {
			t.Errorf("%s.%s has no field in %s", where, name, typ)
			continue
		}
		compare(t, doc, where+"."+name, property, field.Type, decoding)
	}
}

// jsonFields maps JSON names to the struct's fields, embedded structs included.
func jsonFields(typ reflect.Type) map[string]reflect.StructField {
	out := map[string]reflect.StructField{}
	for _, f := range reflect.VisibleFields(typ) {
		if !f.IsExported() || f.Anonymous {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f
	}
	return out
}
