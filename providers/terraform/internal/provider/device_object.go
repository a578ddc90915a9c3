package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

// The device record as data sources expose it; warren_device and warren_devices share it.

type deviceRouteModel struct {
	ID         types.String `tfsdk:"id"`
	Prefix     types.String `tfsdk:"prefix"`
	State      types.String `tfsdk:"state"`
	Advertised types.Bool   `tfsdk:"advertised"`
	Primary    types.Bool   `tfsdk:"primary"`
}

type deviceModel struct {
	ID                types.String       `tfsdk:"id"`
	Name              types.String       `tfsdk:"name"`
	Hostname          types.String       `tfsdk:"hostname"`
	OS                types.String       `tfsdk:"os"`
	Online            types.Bool         `tfsdk:"online"`
	UserID            types.String       `tfsdk:"user_id"`
	UserLoginName     types.String       `tfsdk:"user_login_name"`
	Tags              types.Set          `tfsdk:"tags"`
	Addresses         types.List         `tfsdk:"addresses"`
	Routes            []deviceRouteModel `tfsdk:"routes"`
	ClientVersion     types.String       `tfsdk:"client_version"`
	Created           types.String       `tfsdk:"created"`
	LastSeen          types.String       `tfsdk:"last_seen"`
	Protocol          types.String       `tfsdk:"protocol"`
	DNSName           types.String       `tfsdk:"dns_name"`
	Authorized        types.Bool         `tfsdk:"authorized"`
	KeyExpiry         types.String       `tfsdk:"key_expiry"`
	KeyExpired        types.Bool         `tfsdk:"key_expired"`
	KeyExpiryDisabled types.Bool         `tfsdk:"key_expiry_disabled"`
}

// deviceAttributes describes deviceModel; id and name are set by the caller, since
// warren_device takes them as arguments.
func deviceAttributes() map[string]schema.Attribute {
	str := func(d string) schema.Attribute { return schema.StringAttribute{MarkdownDescription: d, Computed: true} }
	return map[string]schema.Attribute{
		"id":              str("The device's id (`dev_…`)."),
		"name":            str("The device's name in the network (a DNS label, unique)."),
		"hostname":        str("The hostname the device reported."),
		"os":              str("Its operating system."),
		"online":          schema.BoolAttribute{MarkdownDescription: "Whether it sent a heartbeat in the last 60 seconds.", Computed: true},
		"user_id":         str("Id of the user it belongs to."),
		"user_login_name": str("Login name of that user."),
		"tags":            schema.SetAttribute{MarkdownDescription: "Its tags.", ElementType: types.StringType, Computed: true},
		"addresses":       schema.ListAttribute{MarkdownDescription: "Its addresses in the network (IPv4, then IPv6).", ElementType: types.StringType, Computed: true},
		"routes": schema.ListNestedAttribute{
			MarkdownDescription: "Subnet routes it advertises or advertised.",
			Computed:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"id":         str("The route's id (`rt_…`)."),
				"prefix":     str("The prefix."),
				"state":      str("`pending`, `approved` or `disabled`."),
				"advertised": schema.BoolAttribute{MarkdownDescription: "Whether the device still advertises it.", Computed: true},
				"primary":    schema.BoolAttribute{MarkdownDescription: "Whether this device carries the prefix to peers.", Computed: true},
			}},
		},
		"client_version": str("Version of the device's client, if it reported one."),
		"created":        str("When it enrolled (RFC 3339)."),
		"last_seen":      str("Its last heartbeat (RFC 3339)."),
		"protocol":       str("What it speaks: `native` (Warren's agent) or `tailscale` (the Tailscale client)."),
		"dns_name":       str("Its MagicDNS name, `<name>.<network domain>`."),
		"authorized": schema.BoolAttribute{
			MarkdownDescription: "`false` while it waits for approval (network setting `deviceApproval`).",
			Computed:            true,
		},
		"key_expiry": str("When its login expires (RFC 3339); null when it never does."),
		"key_expired": schema.BoolAttribute{
			MarkdownDescription: "Its login expired: it is in no netmap until it logs in again.",
			Computed:            true,
		},
		"key_expiry_disabled": schema.BoolAttribute{MarkdownDescription: "Its login never expires.", Computed: true},
	}
}

// newDeviceModel converts a device's detail record.
func newDeviceModel(d *warren.Device) deviceModel {
	m := deviceModel{
		ID:                types.StringValue(d.ID),
		Name:              types.StringValue(d.Name),
		Hostname:          types.StringValue(d.Hostname),
		OS:                types.StringValue(d.OS),
		Online:            types.BoolValue(d.Online),
		Tags:              setOf(d.Tags),
		ClientVersion:     types.StringPointerValue(d.ClientVersion),
		Created:           types.StringValue(rfc3339(d.Created)),
		LastSeen:          types.StringNull(),
		Routes:            []deviceRouteModel{},
		Protocol:          types.StringValue(string(d.Protocol)),
		DNSName:           types.StringValue(d.DNSName),
		Authorized:        types.BoolValue(d.Authorized),
		KeyExpiry:         types.StringNull(),
		KeyExpired:        types.BoolValue(d.KeyExpired),
		KeyExpiryDisabled: types.BoolValue(d.KeyExpiryDisabled),
	}
	if d.KeyExpiry != nil {
		m.KeyExpiry = types.StringValue(rfc3339(*d.KeyExpiry))
	}
	if d.User != nil {
		m.UserID = types.StringValue(d.User.ID)
		m.UserLoginName = types.StringValue(d.User.LoginName)
	} else {
		m.UserID, m.UserLoginName = types.StringNull(), types.StringNull()
	}
	if d.LastSeen != nil {
		m.LastSeen = types.StringValue(rfc3339(*d.LastSeen))
	}
	addresses := make([]attr.Value, 0, len(d.Addresses))
	for _, a := range d.Addresses {
		addresses = append(addresses, types.StringValue(a))
	}
	m.Addresses = types.ListValueMust(types.StringType, addresses)
	for _, rt := range d.Routes {
		m.Routes = append(m.Routes, deviceRouteModel{
			ID:         types.StringValue(rt.ID),
			Prefix:     types.StringValue(rt.Prefix),
			State:      types.StringValue(string(rt.State)),
			Advertised: types.BoolValue(rt.Advertised),
			Primary:    types.BoolValue(rt.Primary),
		})
	}
	return m
}
