package edge

import (
	"strconv"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/dustin/go-humanize"
)

// The arguments of the hdc global option's subdirectives and of the
// handlers' directives, read alike.

// StringArg reads the single argument of the current subdirective into
// dst.
func StringArg(d *caddyfile.Dispenser, dst *string) error {
	if !d.NextArg() {
		return d.ArgErr()
	}
	*dst = d.Val()
	if d.NextArg() {
		return d.ArgErr()
	}
	return nil
}

// manyStrings appends the subdirective's arguments, at least one, to dst.
func manyStrings(d *caddyfile.Dispenser, dst *[]string) error {
	args := d.RemainingArgs()
	if len(args) == 0 {
		return d.ArgErr()
	}
	*dst = append(*dst, args...)
	return nil
}

// SizeArg reads the single argument of the current subdirective, a size
// such as 64MiB (1 TiB at most), into dst.
func SizeArg(d *caddyfile.Dispenser, dst *int64) error {
	name := d.Val()
	var s string
	if err := StringArg(d, &s); err != nil {
		return err
	}
	n, err := humanize.ParseBytes(s)
	if err != nil || n == 0 || n > 1<<40 {
		return d.Errf("%s: invalid size %q", name, s)
	}
	*dst = int64(n)
	return nil
}

// oneDuration reads the single argument of the current subdirective, a
// positive duration, into dst.
func oneDuration(d *caddyfile.Dispenser, dst *caddy.Duration) error {
	name := d.Val()
	var s string
	if err := StringArg(d, &s); err != nil {
		return err
	}
	dur, err := caddy.ParseDuration(s)
	if err != nil || dur <= 0 {
		return d.Errf("%s: invalid duration %q", name, s)
	}
	*dst = caddy.Duration(dur)
	return nil
}

// oneInt reads the single argument of the current subdirective, an
// integer, into dst.
func oneInt(d *caddyfile.Dispenser, dst *int) error {
	name := d.Val()
	var s string
	if err := StringArg(d, &s); err != nil {
		return err
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return d.Errf("%s: invalid number %q", name, s)
	}
	*dst = n
	return nil
}
