package caddymodule

import (
	"net"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/caddymodule/h1framing"
)

func init() {
	caddy.RegisterModule(Framing{})
}

// Framing is the hdc_framing listener wrapper: it refuses, with a 400
// problem, an HTTP/1.x request that carries both Content-Length and
// Transfer-Encoding, and closes its connection (package h1framing). It
// must come before tls in listener_wrappers; a TLS connection passes it
// untouched.
//
//	servers {
//		listener_wrappers {
//			hdc_framing
//			tls
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

// UnmarshalCaddyfile sets up the wrapper from Caddyfile tokens: it takes
// no arguments.
func (f *Framing) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the wrapper's name
	if d.NextArg() || d.NextBlock(0) {
		return d.Errf("hdc_framing takes no arguments")
	}
	return nil
}

type framingListener struct {
	net.Listener
	logger *zap.Logger
}

func (l *framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &h1framing.Conn{Conn: c, Refused: l.refused}, nil
}

func (l *framingListener) refused(c net.Conn) {
	framingRefusals.Inc()
	l.logger.Warn("request refused: it carries both Content-Length and Transfer-Encoding; the connection is closed",
		zap.Stringer("remote", c.RemoteAddr()))
}

// Interface guards
var (
	_ caddy.Provisioner     = (*Framing)(nil)
	_ caddy.ListenerWrapper = (*Framing)(nil)
	_ caddyfile.Unmarshaler = (*Framing)(nil)
)
