package backend

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"go.uber.org/zap"

	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/duration"
)

// The pflag.Value types of the settings' fields. Each String shows a value
// its Set reads back: the defaults in --help and in docs/configuration.md
// are those.

// stringValue is a pflag.Value of a string.
type stringValue string

func (v *stringValue) String() string     { return string(*v) }
func (v *stringValue) Set(s string) error { *v = stringValue(s); return nil }
func (v *stringValue) Type() string       { return "string" }

// intValue is a pflag.Value of an int.
type intValue int

func (v *intValue) String() string { return strconv.Itoa(int(*v)) }
func (v *intValue) Type() string   { return "int" }

func (v *intValue) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is not a number", s)
	}
	*v = intValue(n)
	return nil
}

// boolValue is a pflag.Value of a bool; the flag alone means true.
type boolValue bool

func (v *boolValue) String() string   { return strconv.FormatBool(bool(*v)) }
func (v *boolValue) Type() string     { return "bool" }
func (v *boolValue) IsBoolFlag() bool { return true }

func (v *boolValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("%q is not a boolean (true or 1, false or 0)", s)
	}
	*v = boolValue(b)
	return nil
}

// durationValue is a pflag.Value of a duration given in seconds ("1800")
// or as a Go duration ("30m").
type durationValue time.Duration

func (d *durationValue) Type() string { return "duration" }

// String is the Go duration without its zero tail: 30m, not 30m0s.
func (d *durationValue) String() string {
	s := time.Duration(*d).String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

func (d *durationValue) Set(s string) error {
	v, err := duration.Parse(s)
	if err != nil {
		return err
	}
	*d = durationValue(v)
	return nil
}

// sizeValue is a pflag.Value of a byte size ("33554432", "32MiB", "32MB").
type sizeValue int64

func (v *sizeValue) Type() string { return "size" }

// String is exact: whole GiB, MiB or KiB, else bytes.
func (v *sizeValue) String() string {
	n := int64(*v)
	for _, u := range []struct {
		size int64
		unit string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.unit
		}
	}
	return strconv.FormatInt(n, 10)
}

func (v *sizeValue) Set(s string) error {
	n, err := humanize.ParseBytes(s)
	if err != nil || n > math.MaxInt64 {
		return fmt.Errorf("%q is not a size (bytes, or such as 32MiB)", s)
	}
	*v = sizeValue(n)
	return nil
}

// prefixList is a pflag.Value of comma-separated address prefixes
// ("10.1.0.0/16, 127.0.0.1"); a bare address is a one-address prefix.
type prefixList []netip.Prefix

func (l *prefixList) Type() string { return "prefixes" }

func (l *prefixList) String() string {
	parts := make([]string, len(*l))
	for i, p := range *l {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// listItems are the non-empty items of a comma-separated list, trimmed.
func listItems(s string) []string {
	var items []string
	for item := range strings.SplitSeq(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}

func (l *prefixList) Set(s string) error {
	var out prefixList
	for _, item := range listItems(s) {
		p, err := netip.ParsePrefix(item)
		if err != nil {
			a, aerr := netip.ParseAddr(item)
			if aerr != nil || a.Zone() != "" {
				return fmt.Errorf("%q is neither a prefix nor an address", item)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p.Masked())
	}
	*l = out
	return nil
}

// destinationList is a pflag.Value of comma-separated destinations
// (webhook.ParseDestination): 10.0.0.21:9180, 10.0.0.22, 10.0.1.0/24.
type destinationList []webhook.Destination

func (l *destinationList) Type() string { return "destinations" }

func (l *destinationList) String() string {
	parts := make([]string, len(*l))
	for i, d := range *l {
		parts[i] = d.String()
	}
	return strings.Join(parts, ",")
}

func (l *destinationList) Set(s string) error {
	var out destinationList
	for _, item := range listItems(s) {
		d, err := webhook.ParseDestination(item)
		if err != nil {
			return fmt.Errorf("%q: %v", item, err)
		}
		out = append(out, d)
	}
	*l = out
	return nil
}

// accountList is a pflag.Value of comma-separated AWS account ids, 12
// digits each.
type accountList []string

func (l *accountList) Type() string   { return "accounts" }
func (l *accountList) String() string { return strings.Join(*l, ",") }

func (l *accountList) Set(s string) error {
	var out accountList
	for _, item := range listItems(s) {
		if len(item) != 12 || strings.Trim(item, "0123456789") != "" {
			return fmt.Errorf("%q is not an AWS account id (12 digits)", item)
		}
		out = append(out, item)
	}
	*l = out
	return nil
}

// levelValue is a pflag.Value of a logger's level.
type levelValue struct{ level *zap.AtomicLevel }

func (v levelValue) String() string { return v.level.Level().String() }
func (v levelValue) Type() string   { return "level" }

func (v levelValue) Set(s string) error {
	if err := v.level.UnmarshalText([]byte(s)); err != nil {
		return errors.New(strconv.Quote(s) + " is not a level: debug, info, warn or error")
	}
	return nil
}
