package edge

import (
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// varClientID is the Caddy variable in which hdc_auth names the client its
// bearer token proves, for the handlers after it.
const varClientID = "hdc.client_id"

// SetClientID names the request's client, as hdc_auth verified it.
func SetClientID(r *http.Request, client string) {
	caddyhttp.SetVar(r.Context(), varClientID, client)
}

// ClientID returns the request's client as hdc_auth named it, "" when it
// named none (a public route, or no hdc_auth before).
func ClientID(r *http.Request) string {
	client, _ := caddyhttp.GetVar(r.Context(), varClientID).(string)
	return client
}
