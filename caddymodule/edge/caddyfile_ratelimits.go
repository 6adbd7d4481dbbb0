package edge

import (
	"math"
	"strconv"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/health-data-connect/hdc/internal/contract"
)

// unmarshalCaddyfile reads the rate_limits block of the hdc global option:
//
//	rate_limits {
//		login   <per second> [<burst>]    # 0: none; the burst defaults to the rate
//		reads   <per second> [<burst>]
//		writes  <per second> [<burst>]
//		uploads <per second> [<burst>]
//		upload_bytes_per_day <size>       # 0: none
//		redis   <url>                     # {env.HDC_RATELIMIT_REDIS}; empty: in memory
//		redis_password <placeholder>      # {env.HDC_RATELIMIT_REDIS_PASSWORD}, never a literal
//		redis_password_file <file>
//		redis_ca <file>                   # the authorities of a rediss:// server
//		redis_allow_unauthenticated true|false # a Redis off this host without a password
//		edges   <count>                   # share while Redis does not answer: 1/count
//		keys    <count>
//	}
func (c *RateLimitConfig) unmarshalCaddyfile(d *caddyfile.Dispenser) error {
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(1) {
		var err error
		switch name := d.Val(); name {
		case string(contract.ClassLogin), string(contract.ClassReads), string(contract.ClassWrites), string(contract.ClassUploads):
			err = c.unmarshalClassRate(d, contract.RouteClass(name))
		case "upload_bytes_per_day":
			err = zeroOrSize(d, &c.UploadBytesPerDay)
		case "redis", "redis_password", "redis_password_file", "redis_ca":
			if d.CountRemainingArgs() == 0 { // an empty placeholder: none
				continue
			}
			err = StringArg(d, c.redisString(name))
		case "redis_allow_unauthenticated":
			err = oneBool(d, &c.RedisAllowUnauthenticated)
		case "edges":
			err = oneInt(d, &c.Edges)
		case "keys":
			err = oneInt(d, &c.Keys)
		default:
			return d.Errf("unknown rate_limits subdirective %q", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// redisString is the field of the Redis's string setting name.
func (c *RateLimitConfig) redisString(name string) *string {
	switch name {
	case "redis_password":
		return &c.RedisPassword
	case "redis_password_file":
		return &c.RedisPasswordFile
	case "redis_ca":
		return &c.RedisCA
	}
	return &c.Redis
}

// oneBool reads a single true or false argument.
func oneBool(d *caddyfile.Dispenser, dst *bool) error {
	var s string
	if err := StringArg(d, &s); err != nil {
		return err
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return d.Errf("%q is not true or false", s)
	}
	*dst = b
	return nil
}

// unmarshalClassRate reads a class's rate: <per second> [<burst>], 0 for
// none, the burst the rate rounded up when not given.
func (c *RateLimitConfig) unmarshalClassRate(d *caddyfile.Dispenser, class contract.RouteClass) error {
	args := d.RemainingArgs()
	if len(args) < 1 || len(args) > 2 {
		return d.ArgErr()
	}
	r, err := strconv.ParseFloat(args[0], 64)
	if err != nil || r < 0 || math.IsInf(r, 0) {
		return d.Errf("%s: %q is not a number of requests a second, 0 or more", class, args[0])
	}
	burst := int(math.Ceil(r))
	if len(args) == 2 && args[1] != "0" {
		if burst, err = strconv.Atoi(args[1]); err != nil || burst < 1 {
			return d.Errf("%s: the burst %q is not a positive integer", class, args[1])
		}
	}
	if r == 0 {
		return nil
	}
	if c.Rates == nil {
		c.Rates = map[contract.RouteClass]contract.Rate{}
	}
	c.Rates[class] = contract.Rate{PerSecond: r, Burst: burst}
	return nil
}

// zeroOrSize reads a size (64MiB), or 0 for none.
func zeroOrSize(d *caddyfile.Dispenser, dst *int64) error {
	if d.CountRemainingArgs() == 1 && d.NextArg() {
		if d.Val() == "0" {
			*dst = 0
			return nil
		}
		d.Prev()
	}
	return SizeArg(d, dst)
}
