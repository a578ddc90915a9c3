package warren_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	warren "github.com/warrenhq/warren/clients/go"
)

// operations maps every operationId of the OpenAPI document to the method that implements it.
// The method values are checked by the compiler; TestEveryOperationHasAMethod checks that the
// keys are exactly the document's operations, so a new operation turns it red until the client
// covers it.
var operations = map[string]any{
	"getNetwork":    (*warren.NetworkService).Get,
	"updateNetwork": (*warren.NetworkService).Update,
	"getSso":        (*warren.NetworkService).SSO,
	"setSso":        (*warren.NetworkService).SetSSO,
	"getMe":         (*warren.NetworkService).Me,

	"listDevices":   (*warren.DevicesService).List,
	"getDevice":     (*warren.DevicesService).Get,
	"deleteDevice":  (*warren.DevicesService).Delete,
	"setDeviceTags": (*warren.DevicesService).SetTags,
	"updateDevice":  (*warren.DevicesService).Update,
	"approveDevice": (*warren.DevicesService).Approve,
	"expireDevice":  (*warren.DevicesService).Expire,

	"listUsers":  (*warren.UsersService).List,
	"createUser": (*warren.UsersService).Create,
	"updateUser": (*warren.UsersService).Update,
	"deleteUser": (*warren.UsersService).Delete,

	"getPolicy":         (*warren.PolicyService).Get, // and GetText for the HuJSON form
	"setPolicy":         (*warren.PolicyService).Set,
	"validatePolicy":    (*warren.PolicyService).Validate,
	"listPolicyHistory": (*warren.PolicyService).History,
	"getPolicyVersion":  (*warren.PolicyService).Version,

	"listKeys":  (*warren.KeysService).List,
	"createKey": (*warren.KeysService).Create,
	"getKey":    (*warren.KeysService).Get,
	"deleteKey": (*warren.KeysService).Delete,

	"listRoutes":   (*warren.RoutesService).List,
	"approveRoute": (*warren.RoutesService).Approve,
	"disableRoute": (*warren.RoutesService).Disable,

	"listConnectionLog": (*warren.LogsService).Connections, // and ConnectionsPage
	"listAuditLog":      (*warren.LogsService).Audit,       // and AuditPage
	"listEvents":        (*warren.EventsService).List,      // and Page

	"listWebhooks":          (*warren.WebhooksService).List,
	"createWebhook":         (*warren.WebhooksService).Create,
	"getWebhook":            (*warren.WebhooksService).Get,
	"updateWebhook":         (*warren.WebhooksService).Update,
	"deleteWebhook":         (*warren.WebhooksService).Delete,
	"rotateWebhookSecret":   (*warren.WebhooksService).Rotate,
	"testWebhook":           (*warren.WebhooksService).Test,
	"listWebhookDeliveries": (*warren.WebhooksService).Deliveries,
	"retryWebhookDelivery":  (*warren.WebhooksService).Retry,

	"registerNode":      (*warren.NodeClient).Register,
	"heartbeat":         (*warren.NodeClient).Heartbeat,
	"disconnectNode":    (*warren.NodeClient).Disconnect,
	"getNetmap":         (*warren.NodeClient).Netmap,
	"reportConnections": (*warren.NodeClient).ReportConnections,
}

func TestEveryOperationHasAMethod(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string `json:"operationId"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	inDocument := map[string]bool{}
	for path, methods := range doc.Paths {
		for method, op := range methods {
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", method, path)
				continue
			}
			inDocument[op.OperationID] = true
		}
	}
	if len(inDocument) == 0 {
		t.Fatal("no operations in the document")
	}
	var missing, stale []string
	for id := range inDocument {
		if _, ok := operations[id]; !ok {
			missing = append(missing, id)
		}
	}
	for id, method := range operations {
		if !inDocument[id] {
			stale = append(stale, id)
		}
		if v := reflect.ValueOf(method); v.Kind() != reflect.Func || v.IsNil() {
			t.Errorf("%s maps to %T, not a method", id, method)
		}
	}
	sort.Strings(missing)
	sort.Strings(stale)
	if len(missing) > 0 {
		t.Errorf("operations of docs/openapi.json without a client method: %v", missing)
	}
	if len(stale) > 0 {
		t.Errorf("methods mapped to operations the document no longer has: %v", stale)
	}
}
