package admin

import (
	"context"
	"net/http"
	"net/url"

	"github.com/health-data-connect/hdc/backend/admin/adminapi"
	"github.com/health-data-connect/hdc/backend/internal/web"
	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
)

// listedBy answers a list route: the query, as parse reads it, and the
// page list returns for it.
func listedBy[Q, T any](w http.ResponseWriter, r *http.Request, parse func(url.Values) (Q, error), list func(context.Context, Q) (T, error)) error {
	q, err := parse(r.URL.Query())
	if err != nil {
		return err
	}
	p, err := list(r.Context(), q)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, p)
	return nil
}

// listed answers a list route that takes a PageQuery alone.
func listed[T any](w http.ResponseWriter, r *http.Request, list func(context.Context, adminapi.PageQuery) (adminapi.Page[T], error)) error {
	return listedBy(w, r, adminapi.ParsePageQuery, list)
}

// byID answers a route on the resource {id} with what fn returns of it.
func byID[T any](w http.ResponseWriter, r *http.Request, fn func(context.Context, string) (T, error)) error {
	return byPath(w, r, "id", contract.ValidID, fn)
}

// byPath answers a route on the resource the path's wildcard name names
// with what fn returns of it: a value that valid refuses is no resource.
func byPath[T any](w http.ResponseWriter, r *http.Request, name string, valid func(string) bool, fn func(context.Context, string) (T, error)) error {
	id := r.PathValue(name)
	if !valid(id) {
		return store.ErrNotFound
	}
	v, err := fn(r.Context(), id)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusOK, v)
	return nil
}

// created answers a route that creates a resource from its JSON body, B:
// 201 and what make returns.
func created[B, T any](w http.ResponseWriter, r *http.Request, make func(context.Context, B) (T, error)) error {
	var body B
	if p := web.DecodeRequest(w, r, &body); p != nil {
		return p
	}
	v, err := make(r.Context(), body)
	if err != nil {
		return err
	}
	web.WriteJSON(w, http.StatusCreated, v)
	return nil
}
