package contract

import (
	"strings"
	"testing"
)

func TestCheckClientName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"Clinic Seven", true},
		{"Klinik Zürich – Süd", true},
		{strings.Repeat("é", MaxClientName), true},
		{"", false},
		{strings.Repeat("a", MaxClientName+1), false},
		{"tab\there", false},
		{"line\nbreak", false},
		{"del\x7f", false},
		{" leading", false},
		{"trailing ", false},
		{"\xff\xfe", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckClientName(tc.name)
			if (err == nil) != tc.ok {
				t.Fatalf("CheckClientName(%q) = %v, want ok %v", tc.name, err, tc.ok)
			}
			if err != nil && tc.name != "" && strings.Contains(err.Error(), tc.name) {
				t.Fatalf("the error quotes the name: %v", err)
			}
		})
	}
}

func TestParseLabel(t *testing.T) {
	for _, tc := range []struct {
		in, key, value string
		ok             bool
	}{
		{"env=prod", "env", "prod", true},
		{"example.org/tier=gold-1", "example.org/tier", "gold-1", true},
		{"a=b=c", "", "", false},
		{"env", "", "", false},
		{"env=", "", "", false},
		{"=prod", "", "", false},
		{"-env=prod", "", "", false},
		{"env=prod-", "", "", false},
		{"Example.org/tier=x", "", "", false},
		{"/tier=x", "", "", false},
		{"a..b/tier=x", "", "", false},
		{strings.Repeat("k", MaxLabelName) + "=v", strings.Repeat("k", MaxLabelName), "v", true},
		{strings.Repeat("k", MaxLabelName+1) + "=v", "", "", false},
		{"k=" + strings.Repeat("v", MaxLabelValue+1), "", "", false},
		{strings.Repeat("p", MaxLabelPrefix+1) + "/k=v", "", "", false},
		{"env=pröd", "", "", false},
		{"env=a b", "", "", false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			k, v, err := ParseLabel(tc.in)
			if (err == nil) != tc.ok || k != tc.key || v != tc.value {
				t.Fatalf("ParseLabel(%q) = %q, %q, %v; want %q, %q, ok %v", tc.in, k, v, err, tc.key, tc.value, tc.ok)
			}
		})
	}
}

func TestCheckLabels(t *testing.T) {
	many := map[string]string{}
	for i := range MaxLabels + 1 {
		many["k"+strings.Repeat("x", i)] = "v"
	}
	if err := CheckLabels(many); err == nil {
		t.Fatal("CheckLabels took more than MaxLabels labels")
	}
	delete(many, "k")
	if err := CheckLabels(many); err != nil {
		t.Fatalf("CheckLabels(%d labels) = %v", len(many), err)
	}
	if err := CheckLabels(map[string]string{"env": "a b"}); err == nil {
		t.Fatal("CheckLabels took a value with a space")
	}
}

func TestFoldNameKeepsPrefixes(t *testing.T) {
	name := "ÉCOLE Clinic Σ"
	for i := range name { // each rune's start
		if !strings.HasPrefix(FoldName(name), FoldName(name[:i])) {
			t.Fatalf("the fold of %q is not a prefix of the fold of %q", name[:i], name)
		}
	}
	if FoldName("Clinic") != "clinic" {
		t.Fatalf("FoldName(Clinic) = %q", FoldName("Clinic"))
	}
}

func FuzzParseLabel(f *testing.F) {
	for _, s := range []string{"env=prod", "example.org/tier=gold", "a=b=c", "", "=", "k/=v"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, v, err := ParseLabel(s)
		if err != nil {
			return
		}
		if k+"="+v != s || CheckLabels(map[string]string{k: v}) != nil {
			t.Fatalf("ParseLabel(%q) = %q, %q, which do not write it back or do not check", s, k, v)
		}
	})
}
