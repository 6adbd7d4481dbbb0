package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/health-data-connect/hdc/internal/strictjson"
)

var localSQS, _ = url.Parse("http://127.0.0.1:4100")

// testAccounts are the AWS accounts the tests' rules allow: AWS's example
// account, and the SQS emulator's.
var testAccounts = []string{"123456789012", "100010001000"}

func TestParse(t *testing.T) {
	rules := Rules{SQSEndpoint: localSQS, AWSAccounts: testAccounts, Resolver: fakeDNS{}}
	const (
		queue  = "https://sqs.eu-west-1.amazonaws.com/123456789012/orders"
		lambda = "arn:aws:lambda:eu-west-1:123456789012:function:on-event"
	)
	tests := []struct {
		name     string
		body     string
		want     Spec
		wantErr  string
		wantJSON bool // the error is strictjson.ErrSyntax
	}{
		{name: "https inferred, all events", body: `{"endpoint":"https://Example.COM/hook?x=1"}`,
			want: Spec{Endpoint: "https://example.com/hook?x=1", Protocol: "https", EventNames: Events}},
		{name: "http inferred", body: `{"endpoint":"http://hooks.example:8080/h"}`,
			want: Spec{Endpoint: "http://hooks.example:8080/h", Protocol: "http", EventNames: Events}},
		{name: "sqs inferred", body: `{"endpoint":"` + queue + `"}`,
			want: Spec{Endpoint: queue, Protocol: "sqs", EventNames: Events}},
		{name: "fifo queue, China region", body: `{"endpoint":"https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q.fifo"}`,
			want: Spec{Endpoint: "https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q.fifo", Protocol: "sqs", EventNames: Events}},
		{name: "local sqs inferred", body: `{"endpoint":"http://127.0.0.1:4100/100010001000/q"}`,
			want: Spec{Endpoint: "http://127.0.0.1:4100/100010001000/q", Protocol: "sqs", EventNames: Events}},
		{name: "lambda inferred", body: `{"endpoint":"` + lambda + `"}`,
			want: Spec{Endpoint: lambda, Protocol: "lambda", EventNames: Events}},
		{name: "lambda alias", body: `{"endpoint":"` + lambda + `:live","protocol":"Lambda function"}`,
			want: Spec{Endpoint: lambda + ":live", Protocol: "lambda", EventNames: Events}},
		{name: "SQS endpoint spelling", body: `{"endpoint":"` + queue + `","protocol":"SQS Endpoint"}`,
			want: Spec{Endpoint: queue, Protocol: "sqs", EventNames: Events}},
		{name: "explicit https for a queue URL", body: `{"endpoint":"` + queue + `","protocol":"HTTPS"}`,
			want: Spec{Endpoint: queue, Protocol: "https", EventNames: Events}},
		{name: "events deduplicated and ordered, key kept", body: `{"endpoint":"https://a.example/h","event_names":["user.delete","appointment.created","user.delete"],"signing_key":"0123456789abcdef"}`,
			want: Spec{Endpoint: "https://a.example/h", Protocol: "https", EventNames: []string{"appointment.created", "user.delete"}, SigningKey: "0123456789abcdef"}},
		{name: "nulls are omissions", body: `{"endpoint":"https://a.example/h","event_names":null,"signing_key":null,"protocol":null,"delivery_format":null}`,
			want: Spec{Endpoint: "https://a.example/h", Protocol: "https", EventNames: Events}},
		{name: "the eka delivery format", body: `{"endpoint":"https://a.example/h","delivery_format":"eka"}`,
			want: Spec{Endpoint: "https://a.example/h", Protocol: "https", EventNames: Events, DeliveryFormat: "eka"}},
		{name: "the Standard Webhooks format named", body: `{"endpoint":"https://a.example/h","delivery_format":"standard-webhooks"}`,
			want: Spec{Endpoint: "https://a.example/h", Protocol: "https", EventNames: Events}},

		{name: "no endpoint", body: `{"event_names":["user.delete"]}`, wantErr: "endpoint is required"},
		{name: "empty endpoint", body: `{"endpoint":""}`, wantErr: "endpoint is required"},
		{name: "relative endpoint", body: `{"endpoint":"/hook"}`, wantErr: "absolute URL"},
		{name: "no host", body: `{"endpoint":"https:///hook"}`, wantErr: "absolute URL"},
		{name: "opaque", body: `{"endpoint":"mailto:a@b.c"}`, wantErr: "absolute URL"},
		{name: "credentials", body: `{"endpoint":"https://u:p@a.example/h"}`, wantErr: "credentials"},
		{name: "fragment", body: `{"endpoint":"https://a.example/h#x"}`, wantErr: "fragment"},
		{name: "bad port", body: `{"endpoint":"https://a.example:99999/h"}`, wantErr: "port"},
		{name: "whitespace", body: `{"endpoint":"https://a.example/h x"}`, wantErr: "whitespace"},
		{name: "ftp", body: `{"endpoint":"ftp://a.example/h"}`, wantErr: "https://"},
		{name: "http protocol, https endpoint", body: `{"endpoint":"https://a.example/h","protocol":"http"}`, wantErr: "http://"},
		{name: "https protocol, http endpoint", body: `{"endpoint":"http://a.example/h","protocol":"https"}`, wantErr: "https://"},
		{name: "unknown protocol", body: `{"endpoint":"https://a.example/h","protocol":"smtp"}`, wantErr: "protocol must be"},
		{name: "sqs with a web URL", body: `{"endpoint":"https://a.example/h","protocol":"sqs"}`, wantErr: "queue URL"},
		{name: "sqs over http on AWS", body: `{"endpoint":"http://sqs.eu-west-1.amazonaws.com/123456789012/q","protocol":"sqs"}`, wantErr: "queue URL"},
		{name: "sqs with a short account", body: `{"endpoint":"https://sqs.eu-west-1.amazonaws.com/1234/q","protocol":"sqs"}`, wantErr: "queue URL"},
		{name: "sqs on another local port", body: `{"endpoint":"http://127.0.0.1:4101/100010001000/q","protocol":"sqs"}`, wantErr: "queue URL"},
		{name: "sqs look-alike host", body: `{"endpoint":"https://sqs.eu-west-1.amazonaws.com.evil.example/123456789012/q","protocol":"sqs"}`, wantErr: "queue URL"},
		{name: "lambda with a URL", body: `{"endpoint":"https://a.example/h","protocol":"lambda"}`, wantErr: "function ARN"},
		{name: "lambda ARN of another service", body: `{"endpoint":"arn:aws:sqs:eu-west-1:123456789012:q"}`, wantErr: "function ARN"},
		{name: "empty events", body: `{"endpoint":"https://a.example/h","event_names":[]}`, wantErr: "must not be empty"},
		{name: "unknown event", body: `{"endpoint":"https://a.example/h","event_names":["user.created"]}`, wantErr: "unknown event"},
		{name: "event case matters", body: `{"endpoint":"https://a.example/h","event_names":["User.Delete"]}`, wantErr: "unknown event"},
		{name: "short signing key", body: `{"endpoint":"https://a.example/h","signing_key":"0123456789abcde"}`, wantErr: "signing_key"},
		{name: "empty signing key", body: `{"endpoint":"https://a.example/h","signing_key":""}`, wantErr: "signing_key"},
		{name: "whsec_ key not base64", body: `{"endpoint":"https://a.example/h","signing_key":"whsec_not-base64-0123456789abcdef"}`, wantErr: "Standard Webhooks secret"},
		{name: "whsec_ key too short", body: `{"endpoint":"https://a.example/h","signing_key":"whsec_MDEyMzQ1Njc4OWFiY2RlZg=="}`, wantErr: "at least 24 bytes"},
		{name: "long endpoint", body: `{"endpoint":"https://a.example/` + strings.Repeat("a", maxEndpoint) + `"}`, wantErr: "limited"},
		{name: "unknown member", body: `{"endpoint":"https://a.example/h","0123456789abcdef":"x"}`, wantErr: `unknown member`},
		{name: "duplicate member", body: `{"endpoint":"https://a.example/h","endpoint":"https://b.example/h"}`, wantErr: "twice"},
		{name: "wrong type", body: `{"endpoint":"https://a.example/h","event_names":"user.delete"}`, wantErr: "wrong type", wantJSON: true},
		{name: "not JSON", body: `endpoint=x`, wantErr: "JSON object", wantJSON: true},
		{name: "unknown delivery format", body: `{"endpoint":"https://a.example/h","delivery_format":"Eka"}`, wantErr: "delivery_format must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := rules.Parse(t.Context(), "w1", []byte(tt.body))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || errors.Is(err, strictjson.ErrSyntax) != tt.wantJSON {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "0123456789abcde") {
					t.Fatalf("error %q quotes the signing key or a member name", err)
				}
				return
			}
			if tt.want.DeliveryFormat == "" {
				tt.want.DeliveryFormat = "standard-webhooks"
			}
			if err != nil || got.Endpoint != tt.want.Endpoint || got.Protocol != tt.want.Protocol ||
				!slices.Equal(got.EventNames, tt.want.EventNames) || got.SigningKey != tt.want.SigningKey || got.DeliveryFormat != tt.want.DeliveryFormat {
				t.Fatalf("Parse = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

// TestParseScreensAddresses: an HTTP(S) endpoint at an address the
// delivery guard refuses is refused at registration already, unless the
// operator's allow-list lets it through.
func TestParseScreensAddresses(t *testing.T) {
	loopbackAllowed := Rules{Guard: NewGuard(GuardConfig{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}}), Resolver: fakeDNS{}}
	tests := []struct {
		name          string
		endpoint      string
		ok, okIfLocal bool
	}{
		{"public host name", "https://hooks.example/h", true, true},
		{"public IPv4", "https://93.184.215.14/h", true, true},
		{"public IPv6", "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/h", true, true},
		{"backend internal listener", "http://127.0.0.1:9081/internal/v1/events", false, true},
		{"other IPv4 loopback", "http://127.9.9.9/h", false, true},
		{"IPv6 loopback", "http://[::1]:9081/h", false, true},
		{"localhost", "http://localhost:9081/h", false, true},
		{"localhost mixed case with dot", "http://LocalHost./h", false, true},
		{"localhost subdomain", "http://api.localhost/h", false, true},
		{"IPv4-mapped loopback", "http://[::ffff:127.0.0.1]/h", false, true},
		{"IPv4 metadata", "http://169.254.169.254/latest/meta-data/", false, false},
		{"IPv6 metadata", "http://[fd00:ec2::254]/latest/meta-data/", false, false},
		{"private 10/8", "http://10.1.2.3/h", false, false},
		{"private 172.16/12", "https://172.16.0.1/h", false, false},
		{"private 192.168/16", "https://192.168.1.1/h", false, false},
		{"shared address space", "http://100.64.0.1/h", false, false},
		{"unspecified address", "http://0.0.0.0:9081/h", false, false},
		{"IPv6 link-local with zone", "http://[fe80::1%25eth0]/h", false, false},
		{"IPv4-mapped private", "http://[::ffff:10.0.0.1]/h", false, false},
		{"public name containing localhost", "http://localhost.example/h", true, true},
		{"loopback as one decimal number", "http://2130706433/h", false, true},
		{"loopback in hex", "http://0x7f000001/h", false, true},
		{"loopback in octal", "http://0177.0.0.1/h", false, true},
		{"loopback short", "http://127.1/h", false, true},
		{"zero", "http://0/h", false, false},
		{"loopback with ideographic full stops", "http://127。0。0。1/h", false, true},
		{"loopback in circled digits", "http://①②⑦.0.0.1/h", false, true},
		{"loopback in fullwidth digits", "http://１２７.0.0.1/h", false, true},
		{"localhost.localdomain", "http://localhost.localdomain/h", false, true},
		{"ip6-localhost", "http://ip6-localhost/h", false, true},
		{"ip6-loopback", "http://ip6-loopback/h", false, true},
		{"Google metadata name", "http://metadata.google.internal/computeMetadata/v1/", false, false},
		{"AWS metadata name", "http://instance-data./latest/meta-data/", false, false},
		{"metadata in hex parts", "http://0xa9.0xfe.0xa9.0xfe/h", false, false},
		{"private short", "http://10.1/h", false, false},
		{"a name that looks numeric", "http://1e100.net/h", true, true},
		{"too many parts to be an address", "http://1.2.3.4.5/h", true, true},
		{"a part too large", "http://1.2.3.256/h", true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := []byte(`{"endpoint":"` + tt.endpoint + `"}`)
			for _, c := range []struct {
				name  string
				rules Rules
				ok    bool
			}{{"the SSRF rules", Rules{Resolver: fakeDNS{}}, tt.ok}, {"loopback allowed", loopbackAllowed, tt.okIfLocal}} {
				_, err := c.rules.Parse(t.Context(), "w1", body)
				if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrEndpointNotAllowed)) {
					t.Errorf("%s (%s): %v", tt.endpoint, c.name, err)
				}
			}
		})
	}
	// A queue of the operator's SQS endpoint is not screened: the operator
	// chose it.
	if _, err := (Rules{SQSEndpoint: localSQS, AWSAccounts: testAccounts}).Parse(t.Context(), "w1", []byte(`{"endpoint":"http://127.0.0.1:4100/100010001000/q"}`)); err != nil {
		t.Errorf("local SQS queue: %v", err)
	}
}

// TestParseAWSAccounts: an SQS queue or a Lambda function is refused unless
// its account is one the operator allows; none is by default.
func TestParseAWSAccounts(t *testing.T) {
	tests := []struct {
		name     string
		endpoint string
		accounts []string
		ok       bool
	}{
		{"a queue of an allowed account", "https://sqs.eu-west-1.amazonaws.com/123456789012/q", testAccounts, true},
		{"a function of an allowed account", "arn:aws:lambda:eu-west-1:123456789012:function:f:live", testAccounts, true},
		{"a queue of another account", "https://sqs.eu-west-1.amazonaws.com/210987654321/q", testAccounts, false},
		{"a function of another account", "arn:aws:lambda:eu-west-1:210987654321:function:platform-admin", testAccounts, false},
		{"a queue, no account allowed", "https://sqs.eu-west-1.amazonaws.com/123456789012/q", nil, false},
		{"a function, no account allowed", "arn:aws:lambda:eu-west-1:123456789012:function:f", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Rules{AWSAccounts: tt.accounts}.Parse(t.Context(), "w1", []byte(`{"endpoint":"`+tt.endpoint+`"}`))
			if tt.ok && err != nil || !tt.ok && !errors.Is(err, ErrAWSAccountNotAllowed) {
				t.Fatalf("Parse = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestParseWithoutLocalSQS(t *testing.T) {
	if _, err := (Rules{}).Parse(t.Context(), "w1", []byte(`{"endpoint":"http://127.0.0.1:4100/100010001000/q","protocol":"sqs"}`)); err == nil {
		t.Fatal("a loopback queue URL was accepted with no SQS endpoint configured")
	}
}

// FuzzParse checks that the parser never panics, and that what it accepts
// is normal: parsing the normalised subscription again gives it back.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"endpoint":"https://a.example/h","event_names":["user.delete"],"signing_key":"0123456789abcdef","protocol":"https"}`,
		`{"endpoint":"https://sqs.us-east-1.amazonaws.com/123456789012/q"}`,
		`{"endpoint":"http://127.0.0.1:4100/100010001000/q","protocol":"SQS endpoint"}`,
		`{"endpoint":"arn:aws:lambda:us-east-1:123456789012:function:f:$LATEST"}`,
		`{"endpoint":"HTTP://A.EXAMPLE:80/%41?q=%20"}`,
		`{"endpoint":"https://[::1]:8443/h"}`,
	} {
		f.Add([]byte(s))
	}
	rules := Rules{SQSEndpoint: localSQS, Resolver: fakeDNS{}}
	f.Fuzz(func(t *testing.T, body []byte) {
		spec, err := rules.Parse(t.Context(), "w1", body)
		if err != nil {
			return
		}
		if !slices.Contains([]string{ProtocolHTTP, ProtocolHTTPS, ProtocolSQS, ProtocolLambda}, spec.Protocol) || len(spec.EventNames) == 0 {
			t.Fatalf("accepted %+v", spec)
		}
		again, _ := json.Marshal(map[string]any{"endpoint": spec.Endpoint, "protocol": spec.Protocol, "event_names": spec.EventNames})
		spec2, err := rules.Parse(t.Context(), "w1", again)
		if err != nil || spec2.Endpoint != spec.Endpoint || spec2.Protocol != spec.Protocol || !slices.Equal(spec2.EventNames, spec.EventNames) {
			t.Fatalf("normal form %+v does not parse to itself: %+v, %v", spec, spec2, err)
		}
	})
}

// TestScreenNamesTheRule: the refusal says what the host stands for and
// which rule refuses it.
func TestScreenNamesTheRule(t *testing.T) {
	tests := []struct{ endpoint, want string }{
		{"http://0x7f000001/", `the endpoint's host "0x7f000001" is the address 127.0.0.1: webhooks may not reach loopback hosts`},
		{"http://ip6-localhost/", `the endpoint's host "ip6-localhost" is a name of 127.0.0.1: webhooks may not reach loopback hosts`},
		{"http://10.1/", `the endpoint's host "10.1" is the address 10.0.0.1: webhooks may not reach private hosts`},
		{"http://169.254.169.254./", `the endpoint's host "169.254.169.254." is the address 169.254.169.254: webhooks may not reach link-local (cloud metadata) hosts`},
		{"http://0/", `the endpoint's host "0" is the address 0.0.0.0: webhooks may not reach special-purpose hosts`},
		{"http://metadata.google.internal/", `the endpoint's host "metadata.google.internal" is the name of a cloud's instance metadata service: webhooks may not reach metadata hosts`},
		{"http://vm/", `the endpoint's host "vm" is a name that resolves only to loopback addresses: webhooks may not reach loopback hosts`},
		{"http://db.internal/", `the endpoint's host "db.internal" is a name that resolves only to private or loopback addresses: webhooks may not reach private or loopback hosts`},
	}
	rules := Rules{Resolver: fakeDNS{"vm": {"127.0.0.1"}, "db.internal": {"10.0.0.5", "fd00::5", "::1"}}}
	for _, tt := range tests {
		t.Run(tt.endpoint, func(t *testing.T) {
			_, err := rules.Parse(t.Context(), "w1", []byte(`{"endpoint":"`+tt.endpoint+`"}`))
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Parse = %v, want %q", err, tt.want)
			}
		})
	}
}

// fakeDNS is a Resolver that answers from its table as *net.Resolver
// answers for network "ip" (an IPv4 address in its IPv4-mapped form), and
// "no such host" for a name it lacks.
type fakeDNS map[string][]string

func (d fakeDNS) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	written, ok := d[host]
	if !ok || network != "ip" {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	addrs := make([]netip.Addr, len(written))
	for i, a := range written {
		addrs[i] = netip.AddrFrom16(netip.MustParseAddr(a).As16())
	}
	return addrs, nil
}

// TestParseScreensResolvedNames: an HTTP(S) endpoint whose host is a name
// is refused when every address the name resolves to is one the delivery
// guard refuses, the operator's allow-list honoured, and accepted when one
// address is allowed; a name that does not resolve is accepted
// (docs/webhooks.md says why). The refusal names the rules, never the
// addresses.
func TestParseScreensResolvedNames(t *testing.T) {
	t.Parallel()
	dns := fakeDNS{
		"vm":                            {"127.0.0.1"},
		"runsc.":                        {"127.1.2.3"},
		"v6.internal":                   {"::1"},
		"db.internal":                   {"10.0.0.5"},
		"ula.internal":                  {"fd00::5"},
		"wire.internal":                 {"169.254.169.254"},
		"cgnat.internal":                {"100.64.0.1"},
		"xn--bcher-kva.internal":        {"192.168.1.1"},
		"loopback-and-private.internal": {"127.0.0.1", "10.0.0.5"},
		"half-public.example":           {"10.0.0.5", "93.184.215.14"},
		"public.example":                {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
	}
	allowed := []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"), netip.MustParsePrefix("10.0.0.0/8")}
	tests := []struct {
		name, endpoint string
		rule           string // that refuses it with no allow-list; "" when accepted
		okIfAllowed    bool   // with loopback and 10/8 allowed
	}{
		{"loopback", "http://vm:9081/h", "loopback", true},
		{"a trailing dot, looked up as delivery looks it up", "http://runsc./h", "loopback", true},
		{"IPv6 loopback", "https://v6.internal/h", "loopback", true},
		{"private", "https://db.internal/h", "private", true},
		{"unique local IPv6", "https://ula.internal/h", "private", false},
		{"metadata", "http://wire.internal/latest/meta-data/", "link-local (cloud metadata)", false},
		{"shared address space", "https://cgnat.internal/h", "special-purpose", false},
		{"an IDNA name, looked up in Punycode", "https://bücher.internal/h", "private", false},
		{"loopback and private", "https://loopback-and-private.internal/h", "loopback or private", true},
		{"private and public", "https://half-public.example/h", "", true},
		{"public", "https://public.example/h", "", true},
		{"no such host", "https://nowhere.example/h", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := []byte(`{"endpoint":"` + tt.endpoint + `"}`)
			_, err := Rules{Resolver: dns}.Parse(t.Context(), "w1", body)
			switch {
			case tt.rule == "" && err != nil:
				t.Fatalf("Parse = %v, want it accepted", err)
			case tt.rule != "" && (!errors.Is(err, ErrEndpointNotAllowed) || !strings.Contains(err.Error(), "resolves only to "+tt.rule+" addresses")):
				t.Fatalf("Parse = %v, want it refused as resolving only to %s addresses", err, tt.rule)
			}
			for _, addrs := range dns {
				for _, a := range addrs {
					if err != nil && strings.Contains(err.Error(), a) {
						t.Fatalf("the refusal %q gives the address %s", err, a)
					}
				}
			}
			if _, err := (Rules{Guard: NewGuard(GuardConfig{Allow: allowed}), Resolver: dns}).Parse(t.Context(), "w1", body); (err == nil) != tt.okIfAllowed {
				t.Fatalf("with %v allowed: Parse = %v, want accepted %v", allowed, err, tt.okIfAllowed)
			}
		})
	}
}

// slowDNS is a Resolver whose every look-up times out.
type slowDNS struct{ t *testing.T }

// LookupNetIP fails the test unless ctx ends within resolveTimeout, then
// times out at once, as it would have at the deadline.
func (d slowDNS) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	if deadline, ok := ctx.Deadline(); !ok || time.Until(deadline) > resolveTimeout {
		d.t.Errorf("the look-up of %s may last past %v", host, resolveTimeout)
	}
	return nil, &net.DNSError{Err: "i/o timeout", Name: host, IsTimeout: true}
}

// TestParseResolveTimeout: a name is looked up for resolveTimeout at most,
// and one whose look-up times out is accepted as one that does not
// resolve: a slow resolver is not the client's error, and the dial-time
// guard checks each delivery still.
func TestParseResolveTimeout(t *testing.T) {
	t.Parallel()
	if _, err := (Rules{Resolver: slowDNS{t}}).Parse(t.Context(), "w1", []byte(`{"endpoint":"https://slow.example/h"}`)); err != nil {
		t.Fatalf("Parse = %v, want it accepted", err)
	}
}
