package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// What the provider tells people names no command that only one of the two CLIs has: a message
// that says `terraform plan` also says `tofu plan`, since OpenTofu users read it too.
func TestMessagesNameBothCLIs(t *testing.T) {
	sources, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	literal := regexp.MustCompile("\"(?:[^\"\\\\\\n]|\\\\.)*\"")
	command := regexp.MustCompile(`\bterraform (import|plan|apply|state)\b`)
	for _, file := range sources {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range literal.FindAllString(string(text), -1) {
			if m := command.FindStringSubmatch(s); m != nil && !strings.Contains(s, "tofu "+m[1]) {
				t.Errorf("%s: %s names `terraform %s` without `tofu %s`", file, s, m[1], m[1])
			}
		}
	}
}
