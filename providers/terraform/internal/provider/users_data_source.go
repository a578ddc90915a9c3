package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	warren "github.com/warrenhq/warren/clients/go"
)

var _ datasource.DataSourceWithConfigure = &usersDataSource{}

type usersDataSource struct{ dataSourceClient }

type userItemModel struct {
	ID          types.String `tfsdk:"id"`
	LoginName   types.String `tfsdk:"login_name"`
	DisplayName types.String `tfsdk:"display_name"`
	Role        types.String `tfsdk:"role"`
	Status      types.String `tfsdk:"status"`
	DeviceCount types.Int64  `tfsdk:"device_count"`
	Created     types.String `tfsdk:"created"`
}

type usersModel struct {
	Role  types.String    `tfsdk:"role"`
	Users []userItemModel `tfsdk:"users"`
}

// NewUsersDataSource is the factory of the warren_users data source.
func NewUsersDataSource() datasource.DataSource { return &usersDataSource{} }

func (d *usersDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_users"
}

func (d *usersDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	str := func(desc string) schema.Attribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The users of the network, optionally only those with one role.",
		Attributes: map[string]schema.Attribute{
			"role": schema.StringAttribute{
				MarkdownDescription: "Only users with this role.",
				Optional:            true,
				Validators:          []validator.String{stringvalidator.OneOf(roles...)},
			},
			"users": schema.ListNestedAttribute{
				MarkdownDescription: "The users found, oldest first.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"id":           str("The user's id (`usr_…`)."),
					"login_name":   str("Login name."),
					"display_name": str("Name shown to people."),
					"role":         str("Role."),
					"status":       str("`active` or `suspended`."),
					"device_count": schema.Int64Attribute{MarkdownDescription: "How many devices belong to the user.", Computed: true},
					"created":      str("When the user was created (RFC 3339)."),
				}},
			},
		},
	}
}

func (d *usersDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m usersModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	users, err := d.client.Users.List(ctx, &warren.UserListOptions{Role: warren.Role(m.Role.ValueString())})
	if err != nil {
		addAPIError(&resp.Diagnostics, "list users", err)
		return
	}
	m.Users = make([]userItemModel, 0, len(users))
	for _, u := range users {
		m.Users = append(m.Users, userItemModel{
			ID:          types.StringValue(u.ID),
			LoginName:   types.StringValue(u.LoginName),
			DisplayName: types.StringValue(u.DisplayName),
			Role:        types.StringValue(string(u.Role)),
			Status:      types.StringValue(string(u.Status)),
			DeviceCount: types.Int64Value(int64(u.DeviceCount)),
			Created:     types.StringValue(rfc3339(u.Created)),
		})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
