package provider

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The worked example ships a variables file for every variable it declares, and its README
// tells the reader to use it: a value given with -var to one command only is missing from the
// next plan, which then destroys what the value configured.
func TestExampleShipsItsVariablesFile(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "..", "examples", "terraform")
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	declared := names(regexp.MustCompile(`(?m)^variable "([a-z_]+)"`), read("main.tf"))
	set := names(regexp.MustCompile(`(?m)^([a-z_]+)\s*=`), read("terraform.tfvars.example"))
	if len(declared) == 0 || !slices.Equal(declared, set) {
		t.Errorf("main.tf declares %v, terraform.tfvars.example sets %v", declared, set)
	}
	readme := read("README.md")
	if !strings.Contains(readme, "cp terraform.tfvars.example terraform.tfvars") {
		t.Error("the example's README does not say to copy terraform.tfvars.example")
	}
	if strings.Contains(readme, "-var gateway_device_id=\"") || strings.Contains(readme, "apply -var") {
		t.Error("the example's README still passes -var to a single command")
	}
	if !slices.Contains(strings.Split(read(".gitignore"), "\n"), "terraform.tfvars") {
		t.Error("terraform.tfvars, which holds the reader's values, is not in the example's .gitignore")
	}
}

// The example's policy passes the server's checks, which grow stricter over time (a policy
// test's accept once named a subnet; it must name one host): a reader's first apply must not
// fail on the file the example ships.
func TestAccExamplePolicyIsValid(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	text, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "examples", "terraform", "policy.hujson"))
	if err != nil {
		t.Fatal(err)
	}
	result, err := apiClient(t).Policy.Validate(context.Background(), string(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range result.Errors {
		t.Errorf("policy.hujson:%d:%d: %s", p.Line, p.Column, p.Msg)
	}
	if !result.Valid && len(result.Errors) == 0 {
		t.Error("the server finds policy.hujson invalid without saying why")
	}
}

// names lists the first group of every match, sorted.
func names(re *regexp.Regexp, text string) []string {
	var out []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}
