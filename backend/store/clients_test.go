package store

import (
	"strings"
	"testing"
)

func TestNameRange(t *testing.T) {
	for _, tt := range []struct{ prefix, from, to string }{
		{"Clinic", "clinic", "clinid"},
		{"zoË", "zoë", "zoì"},
		{"a\U0010FFFF", "a\U0010FFFF", "b"},
		{"\U0010FFFF", "\U0010FFFF", ""},
		{"a\uD7FF", "a\uD7FF", "a\uE000"},
	} {
		t.Run(tt.prefix, func(t *testing.T) {
			from, to := NameRange(tt.prefix)
			if from != tt.from || to != tt.to {
				t.Fatalf("NameRange(%q) = %q, %q; want %q, %q", tt.prefix, from, to, tt.from, tt.to)
			}
			// Every name that starts with the prefix is within the range.
			for _, suffix := range []string{"", " ", "~", "\U0010FFFF\U0010FFFF", "é"} {
				name := from + suffix
				if name < from || to != "" && name >= to {
					t.Fatalf("%q is out of [%q, %q)", name, from, to)
				}
			}
			if to != "" && strings.HasPrefix(to, from) {
				t.Fatalf("the bound %q starts with the prefix %q", to, from)
			}
		})
	}
}

func TestClientUpdateApply(t *testing.T) {
	c := Client{ID: "c1", Name: "A", Labels: map[string]string{"env": "dev", "b": "1"}}
	name := "B"
	got, changes, err := ClientUpdate{Name: &name, SetLabels: map[string]string{"env": "prod", "a": "x"}, RemoveLabels: []string{"b", "z"}}.Apply(c)
	if err != nil {
		t.Fatal(err)
	}
	want := "name:A>B label:a:>x label:b:1> label:env:dev>prod"
	var seen []string
	for _, ch := range changes {
		seen = append(seen, ch.Field+":"+ch.Before+">"+ch.After)
	}
	if strings.Join(seen, " ") != want || got.Name != "B" || len(got.Labels) != 2 || c.Labels["b"] != "1" {
		t.Fatalf("Apply = %+v, %v; want changes %s, and c left as it was (%+v)", got, seen, want, c)
	}
	if _, changes, _ := (ClientUpdate{Name: &c.Name, SetLabels: c.Labels}).Apply(c); changes != nil {
		t.Fatalf("an update that moves nothing made changes %+v", changes)
	}
}
