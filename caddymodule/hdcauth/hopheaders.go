package hdcauth

import (
	"net/http"
	"net/textproto"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/internal/contract"
)

// prepare removes the hop's headers a client sent and the hop-by-hop
// fields of its connection, names the client's address and the request's
// id (to the backend, and to the client in the answer), and ends a
// chunked request's connection.
func prepare(w http.ResponseWriter, r *http.Request) {
	for name := range r.Header {
		if strings.HasPrefix(name, contract.HeaderPrefix) { // names are canonical in the map
			delete(r.Header, name)
		}
	}
	dropHopFields(r.Header)
	// The client's address as Caddy computed it, behind its trusted proxies.
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		edge.SetField(r.Header, contract.HeaderClientIP, ip)
	}
	// The request's id: reading Caddy's placeholder also puts it in the
	// access log line, as "uuid".
	if repl, ok := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		if id, _ := repl.GetString("http.request.uuid"); id != "" {
			edge.SetField(r.Header, contract.HeaderRequestID, id)
			edge.SetField(w.Header(), contract.HeaderRequestIDAnswer, id)
		}
	}
	if r.ProtoMajor == 1 && len(r.TransferEncoding) > 0 {
		// A chunked request ends its connection. Had it carried a
		// Content-Length too, which net/http drops before any handler
		// runs, a proxy in front may have framed it by that length, and
		// the bytes after the chunked body must not be read as a
		// request. hdc_framing refuses such requests before net/http
		// reads them; this holds where a configuration lacks it.
		w.Header().Set("Connection", "close")
	}
}

// hopFields are the fields of one connection (RFC 9110 §7.6.1, and
// HTTP2-Settings, RFC 7540 §3.2.1). None travels to the backend: an
// upgrade to h2c or websocket is for the client's connection to the edge,
// which answers it over HTTP/1.1 (reverse_proxy would otherwise forward
// Upgrade, which the HTTP/2 hop refuses).
var hopFields = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Upgrade", "Http2-Settings"}

// dropHopFields removes the hop-by-hop fields of a client's request: the
// fields its Connection field names, then hopFields. A name of the edge's
// own (X-Hdc-*) is skipped: those the client sent are already gone, and
// the ones the edge sets later must reach the backend (reverse_proxy
// would remove every field Connection names, after the edge set it).
func dropHopFields(h http.Header) {
	for _, v := range h["Connection"] {
		for name := range strings.SplitSeq(v, ",") {
			name = textproto.CanonicalMIMEHeaderKey(strings.TrimSpace(name))
			if !strings.HasPrefix(name, contract.HeaderPrefix) {
				delete(h, name)
			}
		}
	}
	for _, name := range hopFields {
		delete(h, name)
	}
}
