package adminapi

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestRoutesTable: every route is under the prefix, once; reads are open
// to both persons' roles and changes to operators alone; every change,
// and nothing else, takes an Idempotency-Key (a client sends a change
// again only under its key); every operation has one route.
func TestRoutesTable(t *testing.T) {
	t.Parallel()
	patterns, names := map[string]bool{}, map[string]bool{}
	for _, rt := range Routes() {
		if patterns[rt.Pattern()] || names[rt.Name] || !strings.HasPrefix(rt.Path, Prefix+"/") {
			t.Errorf("%s (%s): twice, or not under %s", rt.Pattern(), rt.Name, Prefix)
		}
		patterns[rt.Pattern()], names[rt.Name] = true, true
		read := rt.Method == http.MethodGet
		if read && !slices.Equal(rt.Roles, Readers) || !read && !slices.Equal(rt.Roles, Operators) || read == rt.Idempotent {
			t.Errorf("%s: roles %v, idempotent %v", rt.Pattern(), rt.Roles, rt.Idempotent)
		}
		if got, ok := Lookup(rt.Name); !ok || got.Pattern() != rt.Pattern() {
			t.Errorf("Lookup(%q) = %+v, %v", rt.Name, got, ok)
		}
	}
	if _, ok := Lookup("Nothing"); ok {
		t.Error("Lookup found an operation that is not there")
	}
}

// TestExpand: the path parameters take the wildcards' places in order,
// escaped once; a count that is not the route's, or a parameter that
// names no resource, is refused.
func TestExpand(t *testing.T) {
	t.Parallel()
	delivery, _ := Lookup("GetDelivery")
	tests := []struct {
		params []string
		want   string
		ok     bool
	}{
		{[]string{"s-1", "d-1"}, Prefix + "/subscriptions/s-1/deliveries/d-1", true},
		{[]string{"a/b", "c?d#e f%"}, Prefix + "/subscriptions/a%2Fb/deliveries/c%3Fd%23e%20f%25", true},
		{[]string{"s-1"}, "", false},
		{[]string{"s-1", "d-1", "x"}, "", false},
		{[]string{"", "d-1"}, "", false},
		{[]string{"s-1", ".."}, "", false},
		{[]string{".", "d-1"}, "", false},
	}
	for _, tt := range tests {
		got, err := delivery.Expand(tt.params...)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("Expand(%q) = %q, %v; want %q (ok %v)", tt.params, got, err, tt.want, tt.ok)
		}
	}
	whoami, _ := Lookup("Whoami")
	if got, err := whoami.Expand(); err != nil || got != Prefix+"/whoami" {
		t.Errorf("Expand() = %q, %v", got, err)
	}
}

// TestAPIIsTheTable: every operation of API has its route, named after
// its method, and every route is an operation of API.
func TestAPIIsTheTable(t *testing.T) {
	t.Parallel()
	api := reflect.TypeFor[API]()
	names := map[string]bool{}
	for _, rt := range Routes() {
		names[rt.Name] = true
	}
	for i := range api.NumMethod() {
		name := api.Method(i).Name
		if !names[name] {
			t.Errorf("the operation %s has no route", name)
		}
		delete(names, name)
	}
	for name := range names {
		t.Errorf("the route %s is no operation of API", name)
	}
}
