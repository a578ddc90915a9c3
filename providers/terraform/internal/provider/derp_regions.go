package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// derpRegionsKind is the network's DERP regions as JSON text: an array of Tailscale DERP map
// regions (tailcfg.DERPRegion) in Tailscale's field names, which the server keeps as given.
// Their fields are Tailscale's to add to, so they are written with jsonencode rather than
// modelled attribute by attribute; two texts of the same value (other key order, other layout)
// are equal.
var derpRegionsKind = &stringKind{
	name: "DERP regions",
	equivalent: func(a, b string) bool {
		ra, errA := parseDERPRegions(a)
		rb, errB := parseDERPRegions(b)
		return errA == nil && errB == nil && reflect.DeepEqual(ra, rb)
	},
	check: func(s string) error {
		_, err := parseDERPRegions(s)
		return err
	},
	invalid: "Invalid DERP regions",
}

// parseDERPRegions reads a JSON array of objects, numbers kept exact.
func parseDERPRegions(text string) ([]map[string]any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var regions []map[string]any
	err := dec.Decode(&regions)
	if err == nil && regions == nil {
		err = errors.New("null is not an array")
	}
	if err == nil && dec.More() {
		err = errors.New("text follows the array")
	}
	if err != nil {
		return nil, fmt.Errorf("not a JSON array of DERP map regions (write it with jsonencode([...]), [] for none): %w", err)
	}
	return regions, nil
}

// derpRegionsText writes the server's regions as JSON text.
func derpRegionsText(regions []map[string]any) (string, error) {
	if regions == nil {
		regions = []map[string]any{}
	}
	b, err := json.Marshal(regions)
	return string(b), err
}

// sameDERPRegions reports whether text holds the regions the server answered with.
func sameDERPRegions(text string, regions []map[string]any) bool {
	answered, err := derpRegionsText(regions)
	return err == nil && derpRegionsKind.equivalent(text, answered)
}
