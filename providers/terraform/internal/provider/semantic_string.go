package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// stringKind is a kind of text with its own notion of equality: a HuJSON document, an API
// duration. Two spellings of one value are equal, so the provider keeps the one in the
// configuration and plans no change between them.
type stringKind struct {
	name string
	// equivalent reports whether two spellings hold the same value.
	equivalent func(a, b string) bool
	// check returns why a value is malformed (nil when it is fine); a kind without one is
	// checked where it is used.
	check   func(string) error
	invalid string // summary of check's diagnostic
}

// semanticStringType is a string attribute of a stringKind.
type semanticStringType struct {
	basetypes.StringType
	kind *stringKind
}

var (
	_ basetypes.StringTypable                    = semanticStringType{}
	_ basetypes.StringValuableWithSemanticEquals = semanticString{}
	_ xattr.ValidateableAttribute                = semanticString{}
)

func (t semanticStringType) String() string { return t.kind.name }

func (t semanticStringType) ValueType(context.Context) attr.Value {
	return semanticString{kind: t.kind}
}

func (t semanticStringType) Equal(o attr.Type) bool {
	other, ok := o.(semanticStringType)
	return ok && other.kind == t.kind
}

func (t semanticStringType) ValueFromString(_ context.Context, in basetypes.StringValue) (basetypes.StringValuable, diag.Diagnostics) {
	return semanticString{StringValue: in, kind: t.kind}, nil
}

func (t semanticStringType) ValueFromTerraform(ctx context.Context, in tftypes.Value) (attr.Value, error) {
	v, err := t.StringType.ValueFromTerraform(ctx, in)
	if err != nil {
		return nil, err
	}
	s, ok := v.(basetypes.StringValue)
	if !ok {
		return nil, fmt.Errorf("unexpected value type %T", v)
	}
	return semanticString{StringValue: s, kind: t.kind}, nil
}

// semanticString is a value of a semanticStringType.
type semanticString struct {
	basetypes.StringValue
	kind *stringKind
}

func (k *stringKind) value(text string) semanticString {
	return semanticString{StringValue: basetypes.NewStringValue(text), kind: k}
}

func (v semanticString) Type(context.Context) attr.Type { return semanticStringType{kind: v.kind} }

func (v semanticString) Equal(o attr.Value) bool {
	other, ok := o.(semanticString)
	return ok && other.kind == v.kind && v.StringValue.Equal(other.StringValue)
}

// StringSemanticEquals keeps the spelling in state when the server answers with another one.
func (v semanticString) StringSemanticEquals(_ context.Context, newValuable basetypes.StringValuable) (bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	other, ok := newValuable.(semanticString)
	if !ok || other.kind != v.kind {
		diags.AddError("Semantic equality check error", fmt.Sprintf("expected a %s value, got %T", v.kind.name, newValuable))
		return false, diags
	}
	return v.kind.equivalent(v.ValueString(), other.ValueString()), diags
}

// ValidateAttribute reports a malformed value without asking the server.
func (v semanticString) ValidateAttribute(_ context.Context, req xattr.ValidateAttributeRequest, resp *xattr.ValidateAttributeResponse) {
	if v.IsNull() || v.IsUnknown() || v.kind.check == nil {
		return
	}
	if err := v.kind.check(v.ValueString()); err != nil {
		resp.Diagnostics.AddAttributeError(req.Path, v.kind.invalid, err.Error())
	}
}
