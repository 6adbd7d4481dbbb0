// Package hdcframing is the hdc_framing listener wrapper, over package
// h1framing: an HTTP/1.x request that carries both Content-Length and
// Transfer-Encoding is refused and its connection closed (framing.go); its
// Caddyfile syntax is in caddyfile.go.
package hdcframing

import (
	"net"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/caddymodule/h1framing"
)

func init() {
	caddy.RegisterModule(Framing{})
}

// Framing is the hdc_framing listener wrapper: it refuses, with a 400
// problem, an HTTP/1.x request that carries both Content-Length and
// Transfer-Encoding, and closes its connection (package h1framing). It
// must come after tls in listener_wrappers, where it reads the decrypted
// bytes, and where Caddy puts it when it is listed alone; HTTP/2 and a
// connection switched to another protocol pass it untouched. (Listed
// before tls, it would see only TLS records, and pass them.)
//
//	servers {
//		listener_wrappers {
//			hdc_framing
//		}
//	}
type Framing struct {
	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (Framing) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "caddy.listeners.hdc_framing",
		New: func() caddy.Module { return new(Framing) },
	}
}

// Provision sets the logger.
func (f *Framing) Provision(ctx caddy.Context) error {
	f.logger = ctx.Logger()
	return nil
}

// WrapListener implements caddy.ListenerWrapper.
func (f *Framing) WrapListener(ln net.Listener) net.Listener { return &framingListener{ln, f.logger} }

type framingListener struct {
	net.Listener
	logger *zap.Logger
}

func (l *framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return h1framing.Wrap(c, l.refused), nil
}

func (l *framingListener) refused(c net.Conn) {
	edge.Metrics.FramingRefusals.Inc()
	l.logger.Warn("request refused: it carries both Content-Length and Transfer-Encoding; the connection is closed",
		zap.Stringer("remote", c.RemoteAddr()))
}

// Interface guards
var (
	_ caddy.Provisioner     = (*Framing)(nil)
	_ caddy.ListenerWrapper = (*Framing)(nil)
	_ caddyfile.Unmarshaler = (*Framing)(nil)
)
