package warren_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// installLine finds the `go mod edit` command a README gives for using the client from a
// checkout, joined onto one line.
var installLine = regexp.MustCompile("go mod edit(?:\\\\\\n|[^`\\n])*")

// The install command of both READMEs works as printed: a new module that runs it (with the
// checkout's path in place of /path/to/warren) builds a program that uses the client, offline.
func TestReadmeInstallLineWorks(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"README.md", "clients/go/README.md"} {
		readme := filepath.Join(root, filepath.FromSlash(name))
		text, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		line := installLine.FindString(string(text))
		if line == "" {
			t.Fatalf("%s gives no `go mod edit` line", readme)
		}
		line = strings.ReplaceAll(strings.ReplaceAll(line, "\\\n", " "), "/path/to/warren", root)
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			run := func(args ...string) {
				t.Helper()
				cmd := exec.Command("go", args...)
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off")
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			run("mod", "init", "example.com/tryout")
			run(strings.Fields(line)[1:]...)
			program := "package main\n\nimport warren \"github.com/warrenhq/warren/clients/go\"\n\nfunc main() { _, _ = warren.NewClient() }\n"
			if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(program), 0o644); err != nil {
				t.Fatal(err)
			}
			run("build", "-o", os.DevNull, ".")
		})
	}
}
