package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/health-data-connect/hdc/internal/clientkey"
)

func init() {
	caddy.RegisterModule(Admin{})
}

// Admin adds the key registry to Caddy's admin API:
//
//	GET  /hdc/keys         every kid the edge holds with its client, status, dates and
//	                       last use (no secrets): the registry file's, or the keys
//	                       cached from the backend
//	POST /hdc/keys/reload  re-read the registry file now, or empty the backend's cache
type Admin struct{}

// CaddyModule returns the Caddy module information.
func (Admin) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "admin.api.hdc",
		New: func() caddy.Module { return new(Admin) },
	}
}

// Routes returns the admin routes.
func (a Admin) Routes() []caddy.AdminRoute {
	return []caddy.AdminRoute{
		{Pattern: "/hdc/keys", Handler: caddy.AdminHandlerFunc(a.handleKeys)},
		{Pattern: "/hdc/keys/reload", Handler: caddy.AdminHandlerFunc(a.handleReload)},
	}
}

// adminKey is a key as the admin API shows it.
type adminKey struct {
	clientkey.Listed
	LastUsed *time.Time `json:"last_used,omitempty"`
}

func (Admin) handleKeys(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodGet {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: errors.New("method not allowed")}
	}
	app, err := activeApp()
	if err != nil {
		return err
	}
	keys := app.keys.List()
	out := make([]adminKey, 0, len(keys))
	for _, k := range keys {
		ak := adminKey{Listed: k.Listed()}
		if t := app.keys.LastUse(k.Kid); !t.IsZero() {
			ak.LastUsed = &t
		}
		out = append(out, ak)
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(out)
}

func (Admin) handleReload(w http.ResponseWriter, r *http.Request) error {
	if r.Method != http.MethodPost {
		return caddy.APIError{HTTPStatus: http.StatusMethodNotAllowed, Err: errors.New("method not allowed")}
	}
	app, err := activeApp()
	if err != nil {
		return err
	}
	changed, n, err := app.keys.Reload()
	if err != nil {
		return caddy.APIError{HTTPStatus: http.StatusUnprocessableEntity,
			Err: fmt.Errorf("registry not reloaded, the last good one stays: %w", err)}
	}
	w.Header().Set("Content-Type", "application/json")
	return json.NewEncoder(w).Encode(map[string]any{
		"changed": changed,
		"keys":    n,
	})
}

// activeApp returns the hdc app of the running config.
func activeApp() (*App, error) {
	app, err := caddy.ActiveContext().AppIfConfigured("hdc")
	if err != nil {
		return nil, caddy.APIError{HTTPStatus: http.StatusNotFound, Err: errors.New("the hdc app is not configured")}
	}
	return app.(*App), nil
}

// Interface guards
var _ caddy.AdminRouter = (*Admin)(nil)
