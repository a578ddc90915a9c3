package provider

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/tailscale/hujson"
	warren "github.com/warrenhq/warren/clients/go"
)

// hujsonKind is a HuJSON document. Two documents are equal when they hold the same JSON value
// and the same comments in the same order, so re-indenting, re-wrapping or adding trailing
// commas is no change, while editing a comment is one (the server stores the text verbatim).
// Its syntax is checked by warren_policy's ValidateConfig, which knows the file the text came
// from and names it in the error.
var hujsonKind = &stringKind{
	name:       "HuJSON",
	equivalent: sameHuJSON,
}

// syntaxErrorPlace is how the HuJSON parser places a mistake: "hujson: line 2, column 12: …".
var syntaxErrorPlace = regexp.MustCompile(`^hujson: line (\d+), column (\d+): (.*)$`)

// hujsonSyntaxError is the syntax error of text as the server's validator would report it (a
// line, a column and a message) with the parser's error, or nils when the text parses. A
// mistake the parser does not place comes back as the error alone.
func hujsonSyntaxError(text string) (problem *warren.PolicyError, err error) {
	if _, err = standardJSON(text); err == nil {
		return nil, nil
	}
	m := syntaxErrorPlace.FindStringSubmatch(err.Error())
	if m == nil {
		return nil, err
	}
	line, _ := strconv.Atoi(m[1])
	column, _ := strconv.Atoi(m[2])
	return &warren.PolicyError{Line: line, Column: column, Msg: m[3]}, err
}

// standardJSON parses HuJSON text into a plain JSON value (numbers kept exact).
func standardJSON(text string) (any, error) {
	std, err := hujson.Standardize([]byte(text))
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(std))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// sameHuJSON reports whether two HuJSON texts hold the same JSON value (object keys in any
// order, array elements in order) and the same comments in the same order. Text that does not
// parse is equal only to itself.
func sameHuJSON(a, b string) bool {
	if a == b {
		return true
	}
	va, errA := standardJSON(a)
	vb, errB := standardJSON(b)
	if errA != nil || errB != nil {
		return false
	}
	return reflect.DeepEqual(va, vb) && reflect.DeepEqual(comments(a), comments(b))
}

// comments lists the comments of HuJSON text in order, each with its whitespace collapsed, so
// re-indenting a block comment or moving a comment to another column is not a change.
func comments(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '"':
			i = stringEnd(text, i)
		case strings.HasPrefix(text[i:], "//"):
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			out = append(out, strings.Join(strings.Fields(text[i+2:i+end]), " "))
			i += end
		case strings.HasPrefix(text[i:], "/*"):
			end := strings.Index(text[i+2:], "*/")
			if end < 0 {
				end = len(text) - i - 2
			}
			out = append(out, strings.Join(strings.Fields(text[i+2:i+2+end]), " "))
			i += end + 3
		}
	}
	return out
}

// stringEnd is the index of the quote that closes the string opened at text[start].
func stringEnd(text string, start int) int {
	for i := start + 1; i < len(text); i++ {
		switch text[i] {
		case '\\':
			i++
		case '"':
			return i
		}
	}
	return len(text)
}
