package provider

import (
	"context"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	warren "github.com/warrenhq/warren/clients/go"
)

// The network's DNS settings as a Terraform object, shared by the warren_network data source
// and the warren_network_settings resource.

var stringListType = types.ListType{ElemType: types.StringType}

var dnsRecordAttrTypes = map[string]attr.Type{
	"name":  types.StringType,
	"type":  types.StringType,
	"value": types.StringType,
}

var dnsAttrTypes = map[string]attr.Type{
	"domain":         types.StringType,
	"magic_dns":      types.BoolType,
	"nameservers":    stringListType,
	"search_domains": stringListType,
	"split_dns":      types.MapType{ElemType: stringListType},
	"extra_records":  types.ListType{ElemType: types.ObjectType{AttrTypes: dnsRecordAttrTypes}},
}

// dnsDescriptions documents the DNS attributes once for the data source and the resource.
var dnsDescriptions = map[string]string{
	"domain":         "The MagicDNS domain: every device is `<name>.<domain>`. The server's default is `<network name>.warren.internal`.",
	"magic_dns":      "Tailscale clients answer their peers' names themselves.",
	"nameservers":    "IP addresses of the resolvers Tailscale clients use for every other name (at most 16).",
	"search_domains": "Domains searched after the MagicDNS domain (at most 16).",
	"split_dns":      "Split DNS: a DNS domain → the IP addresses of the resolvers for names under it. An empty list makes the clients answer names under the domain themselves, from `extra_records`, and forward none of them.",
	"extra_records":  "Records the clients answer themselves: `name`, `type` (`A` or `AAAA`) and `value` (an address of that family).",
}

type dnsModel struct {
	Domain        types.String `tfsdk:"domain"`
	MagicDNS      types.Bool   `tfsdk:"magic_dns"`
	Nameservers   types.List   `tfsdk:"nameservers"`
	SearchDomains types.List   `tfsdk:"search_domains"`
	SplitDNS      types.Map    `tfsdk:"split_dns"`
	ExtraRecords  types.List   `tfsdk:"extra_records"`
}

type dnsRecordModel struct {
	Name  types.String `tfsdk:"name"`
	Type  types.String `tfsdk:"type"`
	Value types.String `tfsdk:"value"`
}

// dnsObject converts the server's DNS settings; lists and maps are never null, so an empty
// one reads back as [] or {} and matches a configuration that sets it empty.
func dnsObject(ctx context.Context, d warren.NetworkDNS, diags *diag.Diagnostics) types.Object {
	split := make(map[string]attr.Value, len(d.SplitDNS))
	for domain, servers := range d.SplitDNS {
		split[domain] = listOf(servers)
	}
	records := make([]dnsRecordModel, 0, len(d.ExtraRecords))
	for _, r := range d.ExtraRecords {
		records = append(records, dnsRecordModel{Name: types.StringValue(r.Name), Type: types.StringValue(r.Type), Value: types.StringValue(r.Value)})
	}
	recordList, ds := types.ListValueFrom(ctx, types.ObjectType{AttrTypes: dnsRecordAttrTypes}, records)
	diags.Append(ds...)
	splitMap, ds := types.MapValue(stringListType, split)
	diags.Append(ds...)
	obj, ds := types.ObjectValueFrom(ctx, dnsAttrTypes, dnsModel{
		Domain:        types.StringValue(d.Domain),
		MagicDNS:      types.BoolValue(d.MagicDNS),
		Nameservers:   listOf(d.Nameservers),
		SearchDomains: listOf(d.SearchDomains),
		SplitDNS:      splitMap,
		ExtraRecords:  recordList,
	})
	diags.Append(ds...)
	return obj
}

// dnsFields reads a DNS object; a null or unknown one gives a model of null fields.
func dnsFields(ctx context.Context, obj types.Object, diags *diag.Diagnostics) dnsModel {
	var m dnsModel
	if obj.IsNull() || obj.IsUnknown() {
		return m
	}
	diags.Append(obj.As(ctx, &m, basetypes.ObjectAsOptions{})...)
	return m
}

// dnsUpdate is the DNS part of a PATCH: the fields of want that are known and differ from
// have. It is nil when nothing changes.
func dnsUpdate(ctx context.Context, want, have dnsModel, diags *diag.Diagnostics) *warren.NetworkDNSUpdate {
	u := warren.NetworkDNSUpdate{}
	changed := false
	if differs(want.Domain, have.Domain) {
		// "" is the server's default: sent as domain null (the CLI's --dns-domain-default).
		if want.Domain.ValueString() == "" {
			u.ResetDomain, changed = true, true
		} else {
			u.Domain, changed = want.Domain.ValueStringPointer(), true
		}
	}
	if differs(want.MagicDNS, have.MagicDNS) {
		u.MagicDNS, changed = want.MagicDNS.ValueBoolPointer(), true
	}
	if differs(want.Nameservers, have.Nameservers) {
		servers := stringList(ctx, want.Nameservers, diags)
		u.Nameservers, changed = &servers, true
	}
	if differs(want.SearchDomains, have.SearchDomains) {
		domains := stringList(ctx, want.SearchDomains, diags)
		u.SearchDomains, changed = &domains, true
	}
	if differs(want.SplitDNS, have.SplitDNS) {
		split := map[string][]string{}
		diags.Append(want.SplitDNS.ElementsAs(ctx, &split, false)...)
		u.SplitDNS, changed = &split, true
	}
	if differs(want.ExtraRecords, have.ExtraRecords) {
		var models []dnsRecordModel
		diags.Append(want.ExtraRecords.ElementsAs(ctx, &models, false)...)
		records := make([]warren.DNSRecord, 0, len(models))
		for _, r := range models {
			records = append(records, warren.DNSRecord{Name: r.Name.ValueString(), Type: r.Type.ValueString(), Value: r.Value.ValueString()})
		}
		u.ExtraRecords, changed = &records, true
	}
	if !changed {
		return nil
	}
	return &u
}

// differs reports whether a planned value is one to send: known, set, and not the value held.
func differs(want, have attr.Value) bool {
	return !want.IsNull() && !want.IsUnknown() && !want.Equal(have)
}

// stringList converts a Terraform list of strings (null: none).
func stringList(ctx context.Context, list types.List, diags *diag.Diagnostics) []string {
	out := []string{}
	if list.IsNull() || list.IsUnknown() {
		return out
	}
	diags.Append(list.ElementsAs(ctx, &out, false)...)
	return out
}

var notInDNSLabel = regexp.MustCompile(`[^a-z0-9-]+`)

// defaultDNSDomain is the DNS domain the server gives a network that has none set:
// `<network name>.warren.internal`, the name lower case with every run of other characters a
// hyphen, trimmed of hyphens, cut to 63 characters and trimmed again, or "network" when nothing
// is left. It mirrors dnsDomain in packages/contract/src/dns-domain.ts; the acceptance test
// that resets the domain fails on an apply whose answer this does not match.
func defaultDNSDomain(networkName string) string {
	label := strings.Trim(notInDNSLabel.ReplaceAllString(strings.ToLower(networkName), "-"), "-")
	if len(label) > 63 {
		// Cut, it may end in a hyphen again, which no DNS label may.
		label = strings.TrimRight(label[:63], "-")
	}
	if label == "" {
		label = "network"
	}
	return label + ".warren.internal"
}
