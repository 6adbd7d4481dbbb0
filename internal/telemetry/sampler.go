package telemetry

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// NewSampler is the sampler that OTEL_TRACES_SAMPLER=name and
// OTEL_TRACES_SAMPLER_ARG=arg name, with each of the SDK's values
// (always_on, always_off, traceidratio and the parentbased_ form of each;
// "" is the SDK's default, parentbased_always_on, and an empty arg its
// ratio of 1), at a trust boundary: a span whose remote parent the request
// was marked to distrust (DistrustParent) is decided as a trace's first
// span is, by the sampler's root, and not by the parent's sampled flag.
//
// The names are mapped here because the SDK reads the variables in a
// function of its own (sdk/trace's samplerFromEnv, unexported) and offers
// no way to wrap the sampler it makes. Where the SDK logs a name or a
// ratio it cannot read and then samples every trace, NewSampler refuses
// it: a typing error must not trace a whole fleet.
func NewSampler(name, arg string) (sdktrace.Sampler, error) {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		name = "parentbased_always_on"
	}
	kind, parentBased := strings.CutPrefix(name, "parentbased_")
	var root sdktrace.Sampler
	switch kind {
	case "always_on":
		root = sdktrace.AlwaysSample()
	case "always_off":
		root = sdktrace.NeverSample()
	case "traceidratio":
		ratio, err := traceIDRatio(strings.TrimSpace(arg))
		if err != nil {
			return nil, err
		}
		root = sdktrace.TraceIDRatioBased(ratio)
	default:
		return nil, fmt.Errorf("OTEL_TRACES_SAMPLER %q: not always_on, always_off, traceidratio or parentbased_ and one of them", name)
	}
	configured := root
	if parentBased {
		configured = sdktrace.ParentBased(root)
	}
	return boundary{configured: configured, root: root}, nil
}

// traceIDRatio reads OTEL_TRACES_SAMPLER_ARG's ratio, 1 when it is empty.
func traceIDRatio(arg string) (float64, error) {
	if arg == "" {
		return 1, nil
	}
	ratio, err := strconv.ParseFloat(arg, 64)
	if err != nil || !(ratio >= 0 && ratio <= 1) { // NaN too
		return 0, fmt.Errorf("OTEL_TRACES_SAMPLER_ARG %q: not a ratio from 0 to 1", arg)
	}
	return ratio, nil
}

// DistrustParent marks ctx so that a span started under it with a remote
// parent, the one a request's trace context names, is sampled as a
// trace's first span is (NewSampler): the edge marks a client's request,
// since anyone may set the sampled flag. The span keeps the parent's
// trace id, so that the client's trace and the edge's still join.
func DistrustParent(ctx context.Context) context.Context {
	return context.WithValue(ctx, distrustedKey{}, true)
}

type distrustedKey struct{}

// boundary samples as configured, the sampler the environment names,
// except a span under a distrusted remote parent: root decides it as if
// it had no parent, on a trace id drawn for the decision alone, since
// TraceIDRatioBased decides from the trace id and a client may choose one
// that it always samples. The span keeps the parent's tracestate, as the
// configured sampler would.
type boundary struct {
	configured, root sdktrace.Sampler
}

func (b boundary) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	parent := trace.SpanContextFromContext(p.ParentContext)
	if !parent.IsRemote() || p.ParentContext.Value(distrustedKey{}) == nil {
		return b.configured.ShouldSample(p)
	}
	p.ParentContext = trace.ContextWithSpanContext(p.ParentContext, trace.SpanContext{})
	binary.BigEndian.PutUint64(p.TraceID[:8], rand.Uint64())
	binary.BigEndian.PutUint64(p.TraceID[8:], rand.Uint64())
	result := b.root.ShouldSample(p)
	result.Tracestate = parent.TraceState()
	return result
}

func (b boundary) Description() string {
	return "TrustBoundary{" + b.configured.Description() + ",distrustedParent:" + b.root.Description() + "}"
}
