// Package webhook manages webhook subscriptions: a workspace registers an
// endpoint (an HTTP(S) URL, an SQS queue or a Lambda function) for named
// events, lists its subscriptions (with their status and last delivery
// outcome) and deletes them. It also receives the events other services
// publish (Ingress), which package webhook/delivery delivers.
package webhook

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/strictjson"
)

// Events are the event names of the API, in the specification's order.
var Events = []string{
	"appointment.created",
	"appointment.updated",
	"prescription.created",
	"prescription.updated",
	"receipt.created",
	"receipt.updated",
	"user.delete",
}

// SystemEvents are the events the backend itself publishes about a
// workspace's subscriptions. A subscription receives them only when its
// event_names ask for them: they are not among the events a subscription
// that omits event_names selects, and the internal listener refuses them.
var SystemEvents = []string{store.EventSubscriptionDisabled}

// knownEvents are the names a subscription may select, in the canonical
// order.
var knownEvents = slices.Concat(Events, SystemEvents)

// Delivery protocols, as stored.
const (
	ProtocolHTTP   = "http"
	ProtocolHTTPS  = "https"
	ProtocolSQS    = "sqs"
	ProtocolLambda = "lambda"
)

// protocolNames maps every accepted spelling (compared case-insensitively)
// to its protocol.
var protocolNames = map[string]string{
	"http":            ProtocolHTTP,
	"https":           ProtocolHTTPS,
	"sqs":             ProtocolSQS,
	"sqs endpoint":    ProtocolSQS,
	"lambda":          ProtocolLambda,
	"lambda function": ProtocolLambda,
}

// Limits of a subscription request.
const (
	maxEndpoint       = 2048
	minSigningKeyLen  = 16 // characters
	maxSigningKeySize = 1024
)

var (
	// awsRegion is the shape of an AWS region name (us-east-1, us-gov-west-1, cn-north-1).
	awsRegion = `[a-z]{2}(-[a-z]+)+-[0-9]{1,2}`
	// sqsHost matches the hosts of SQS queue URLs: sqs.<region>.amazonaws.com
	// (.com.cn in China), the dual-stack sqs.<region>.api.aws, and the legacy
	// <region>.queue.amazonaws.com.
	sqsHost = regexp.MustCompile(`^(sqs\.` + awsRegion + `\.(amazonaws\.com(\.cn)?|api\.aws)|` + awsRegion + `\.queue\.amazonaws\.com)$`)
	// sqsPath is /<account id>/<queue name>.
	sqsPath = regexp.MustCompile(`^/[0-9]{12}/[A-Za-z0-9_-]{1,80}(\.fifo)?$`)
	// lambdaARN is a function ARN with an optional version or alias.
	lambdaARN = regexp.MustCompile(`^arn:aws(-cn|-us-gov)?:lambda:` + awsRegion + `:[0-9]{12}:function:[A-Za-z0-9_-]{1,64}(:(\$LATEST|[A-Za-z0-9_-]{1,128}))?$`)
)

// ErrGrantsUnavailable is Rules.Parse's error when the workspace's grants
// cannot be read: the registration fails, as the server's error, rather
// than be decided without them.
var ErrGrantsUnavailable = errors.New("webhook: the workspace's grants cannot be read")

// Spec is a valid, normalised subscription request.
type Spec struct {
	Endpoint   string
	Protocol   string
	EventNames []string
	// SigningKey is empty when the client gave none (registration then
	// generates one).
	SigningKey string
	// DeliveryFormat is store.FormatStandardWebhooks (the default) or
	// store.FormatEka.
	DeliveryFormat string
}

// request is the body of a registration. Pointers tell an omitted (or
// null) member from an empty one.
type request struct {
	Endpoint   *string   `json:"endpoint"`
	EventNames *[]string `json:"event_names"`
	SigningKey *string   `json:"signing_key"`
	Protocol   *string   `json:"protocol"`
	// DeliveryFormat chooses how deliveries are written and signed.
	DeliveryFormat *string `json:"delivery_format"`
}

// Rules validates subscription requests.
type Rules struct {
	// SQSEndpoint, when set, is the base URL of an SQS-compatible service
	// (AWS_ENDPOINT_URL_SQS, e.g. a local emulator): queue URLs on its
	// scheme and host are accepted besides AWS's own.
	SQSEndpoint *url.URL
	// Guard decides which addresses a workspace's deliveries may reach
	// (nil: the SSRF rules alone). An HTTP(S) endpoint whose host is a
	// literal address it refuses, a loopback name it refuses, or a name
	// that resolves only to such addresses, is refused with
	// ErrEndpointNotAllowed.
	Guard *Guard
	// Resolver looks up the host names of HTTP(S) endpoints; nil is
	// net.DefaultResolver, which deliveries dial through.
	Resolver Resolver
	// AWSAccounts are the AWS accounts (12-digit ids) whose SQS queues and
	// Lambda functions subscriptions may name; any other is refused with
	// ErrAWSAccountNotAllowed. None by default: both protocols are off.
	AWSAccounts []string
}

// Parse reads and validates a registration body of workspace, looking up
// the host name of an HTTP(S) endpoint within ctx and checking it against
// the workspace's grants. Its errors are safe to show to the client;
// web.DecodeProblem maps them to problems.
func (r Rules) Parse(ctx context.Context, workspace string, body []byte) (Spec, error) {
	var req request
	if err := strictjson.Unmarshal(body, &req); err != nil {
		return Spec{}, err
	}
	if req.Endpoint == nil || *req.Endpoint == "" {
		return Spec{}, errors.New("endpoint is required")
	}
	ep := *req.Endpoint
	if len(ep) > maxEndpoint {
		return Spec{}, fmt.Errorf("endpoint is limited to %d bytes", maxEndpoint)
	}
	var spec Spec
	if req.Protocol != nil {
		p, ok := protocolNames[strings.ToLower(*req.Protocol)]
		if !ok {
			return Spec{}, errors.New(`protocol must be one of "http", "https", "SQS endpoint" (or "sqs"), "Lambda function" (or "lambda")`)
		}
		spec.Protocol = p
	} else {
		spec.Protocol = r.infer(ep)
	}
	var err error
	if spec.Endpoint, err = r.endpoint(ctx, workspace, spec.Protocol, ep); err != nil {
		return Spec{}, err
	}
	if !AWSAccountAllowed(spec.Protocol, spec.Endpoint, r.AWSAccounts) {
		return Spec{}, ErrAWSAccountNotAllowed
	}
	if spec.EventNames, err = eventNames(req.EventNames); err != nil {
		return Spec{}, err
	}
	if req.SigningKey != nil {
		if err := CheckSigningKey(*req.SigningKey); err != nil {
			return Spec{}, err
		}
		spec.SigningKey = *req.SigningKey
	}
	spec.DeliveryFormat = store.FormatStandardWebhooks
	if req.DeliveryFormat != nil {
		if f := *req.DeliveryFormat; f != store.FormatStandardWebhooks && f != store.FormatEka {
			return Spec{}, fmt.Errorf("delivery_format must be %q (the default) or %q", store.FormatStandardWebhooks, store.FormatEka)
		}
		spec.DeliveryFormat = *req.DeliveryFormat
	}
	return spec, nil
}

// infer chooses the protocol of an endpoint given without one. An endpoint
// that fits none is left to endpoint to refuse as https.
func (r Rules) infer(ep string) string {
	if strings.HasPrefix(ep, "arn:") {
		return ProtocolLambda
	}
	u, err := url.Parse(ep)
	switch {
	case err != nil:
		return ProtocolHTTPS
	case r.isQueue(u):
		return ProtocolSQS
	case u.Scheme == "http":
		return ProtocolHTTP
	}
	return ProtocolHTTPS
}

// endpoint checks that ep fits protocol, and workspace's policy for an
// HTTP(S) endpoint, and returns its normal form.
func (r Rules) endpoint(ctx context.Context, workspace, protocol, ep string) (string, error) {
	if protocol == ProtocolLambda {
		if !lambdaARN.MatchString(ep) {
			return "", errors.New("a Lambda endpoint must be a function ARN: arn:aws:lambda:<region>:<account>:function:<name>[:<qualifier>]")
		}
		return ep, nil
	}
	u, err := url.Parse(ep)
	if err != nil || u.Opaque != "" || u.Host == "" || u.Hostname() == "" || !utf8.ValidString(ep) {
		return "", errors.New("endpoint must be an absolute URL")
	}
	if u.User != nil {
		return "", errors.New("endpoint must not carry credentials")
	}
	if u.Fragment != "" || strings.Contains(ep, "#") {
		return "", errors.New("endpoint must not have a fragment")
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return "", errors.New("endpoint has an invalid port")
		}
	}
	if strings.ContainsAny(ep, " \t\r\n") {
		return "", errors.New("endpoint must not contain whitespace")
	}
	u.Host = strings.ToLower(u.Host)
	switch protocol {
	case ProtocolSQS:
		if !r.isQueue(u) {
			return "", errors.New("an SQS endpoint must be a queue URL: https://sqs.<region>.amazonaws.com/<account>/<queue>")
		}
	case ProtocolHTTP, ProtocolHTTPS:
		if u.Scheme != protocol {
			return "", fmt.Errorf("the %s protocol needs a %s:// endpoint", protocol, protocol)
		}
		p, err := r.guard().FreshPolicy(ctx, workspace)
		if err != nil {
			return "", fmt.Errorf("%w: %w", ErrGrantsUnavailable, err)
		}
		if err := screen(ctx, r.resolver(), p, u); err != nil {
			return "", err
		}
	}
	return u.String(), nil
}

// resolver returns r.Resolver, or net.DefaultResolver when it is nil.
func (r Rules) resolver() Resolver {
	if r.Resolver == nil {
		return net.DefaultResolver
	}
	return r.Resolver
}

// guard returns r.Guard, or a Guard of the SSRF rules alone when it is
// nil.
func (r Rules) guard() *Guard {
	if r.Guard == nil {
		return NewGuard(GuardConfig{})
	}
	return r.Guard
}

// isQueue reports whether u is an SQS queue URL: an AWS queue over https,
// or a queue of the configured SQS endpoint.
func (r Rules) isQueue(u *url.URL) bool {
	if !sqsPath.MatchString(u.EscapedPath()) || u.RawQuery != "" || u.User != nil {
		return false
	}
	host := strings.ToLower(u.Host)
	if u.Scheme == "https" && sqsHost.MatchString(host) {
		return true
	}
	return r.SQSEndpoint != nil && u.Scheme == r.SQSEndpoint.Scheme && host == strings.ToLower(r.SQSEndpoint.Host)
}

// eventNames validates the requested events: all of them when omitted,
// otherwise a non-empty list of known names, returned once each in the
// canonical order.
func eventNames(names *[]string) ([]string, error) {
	if names == nil {
		return slices.Clone(Events), nil
	}
	if len(*names) == 0 {
		return nil, errors.New("event_names must not be empty; omit it to subscribe to every event")
	}
	for _, n := range *names {
		if !slices.Contains(knownEvents, n) {
			return nil, fmt.Errorf("unknown event name; known events: %s", strings.Join(knownEvents, ", "))
		}
	}
	return canonical(*names), nil
}

// canonical returns names once each, in the order of knownEvents; names
// it does not know (stored by a later version) come last, sorted.
func canonical(names []string) []string {
	rank := func(n string) int {
		if i := slices.Index(knownEvents, n); i >= 0 {
			return i
		}
		return len(knownEvents)
	}
	out := slices.Clone(names)
	slices.SortFunc(out, func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), strings.Compare(a, b))
	})
	return slices.Compact(out)
}

// CheckSigningKey validates a signing key a client gives: its length, and
// a whsec_ key's base64 (contract.SigningKeyBytes). Its error, safe to
// show, never quotes the key.
func CheckSigningKey(k string) error {
	if utf8.RuneCountInString(k) < minSigningKeyLen || len(k) > maxSigningKeySize {
		return fmt.Errorf("signing_key must have at least %d characters and at most %d bytes", minSigningKeyLen, maxSigningKeySize)
	}
	_, err := contract.SigningKeyBytes(k)
	return err
}
