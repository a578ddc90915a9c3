package provider

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// docsDir holds the provider's documentation in the registry's layout.
const docsDir = "../../docs"

// readDoc is a documentation file, failing the test when it is missing.
func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v: every resource and data source has its page", err)
	}
	return string(b)
}

// The documentation keeps up with the schemas: the index names the provider's arguments, and
// every resource and data source has its page, linked from the index and the README; each page
// names every attribute and says which are sensitive, and a resource's page shows how to
// import it.
func TestDocsCoverEveryResource(t *testing.T) {
	ctx := context.Background()
	p := New("test")()
	var meta provider.MetadataResponse
	p.Metadata(ctx, provider.MetadataRequest{}, &meta)
	index := readDoc(t, filepath.Join(docsDir, "index.md"))
	readme := readDoc(t, filepath.Join(docsDir, "..", "README.md"))
	var providerSchema provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &providerSchema)
	for name, attr := range providerSchema.Schema.Attributes {
		checkAttributeDoc(t, "index.md", index, name, attr.IsSensitive())
	}

	for _, factory := range p.Resources(ctx) {
		r := factory()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: meta.TypeName}, &md)
		var sch resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sch)
		page := filepath.Join("resources", strings.TrimPrefix(md.TypeName, meta.TypeName+"_")+".md")
		doc := readDoc(t, filepath.Join(docsDir, page))
		checkListed(t, md.TypeName, page, index, readme)
		if !strings.Contains(doc, "## Import") || !strings.Contains(doc, " import "+md.TypeName+".") {
			t.Errorf("%s: no import example (`terraform import %s.NAME ID`) under ## Import", page, md.TypeName)
		}
		for name, attr := range sch.Schema.Attributes {
			checkAttributeDoc(t, page, doc, name, attr.IsSensitive())
		}
	}
	for _, factory := range p.DataSources(ctx) {
		d := factory()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: meta.TypeName}, &md)
		var sch datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &sch)
		page := filepath.Join("data-sources", strings.TrimPrefix(md.TypeName, meta.TypeName+"_")+".md")
		doc := readDoc(t, filepath.Join(docsDir, page))
		checkListed(t, md.TypeName, page, index, readme)
		for name, attr := range sch.Schema.Attributes {
			checkAttributeDoc(t, page, doc, name, attr.IsSensitive())
		}
	}
}

func checkListed(t *testing.T, typeName, page, index, readme string) {
	t.Helper()
	if !strings.Contains(index, "[`"+typeName+"`]("+page+")") {
		t.Errorf("docs/index.md does not link %s to %s", typeName, page)
	}
	if !strings.Contains(readme, "[`"+typeName+"`](docs/"+page+")") {
		t.Errorf("README.md does not link %s to docs/%s", typeName, page)
	}
}

// checkAttributeDoc requires the attribute's name in the page and, for a sensitive one, a line
// that names it and says so.
func checkAttributeDoc(t *testing.T, page, doc, name string, sensitive bool) {
	t.Helper()
	if !strings.Contains(doc, "`"+name+"`") {
		t.Errorf("%s does not describe `%s`", page, name)
		return
	}
	if !sensitive {
		return
	}
	for _, line := range strings.Split(doc, "\n") {
		if strings.Contains(line, "`"+name+"`") && strings.Contains(line, "Sensitive") {
			return
		}
	}
	t.Errorf("%s does not say that `%s` is sensitive", page, name)
}
