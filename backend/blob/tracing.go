package blob

import (
	"context"
	"io"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// tracer makes the blob store's spans, through OpenTelemetry's global
// provider.
var tracer = otel.Tracer("github.com/health-data-connect/hdc/backend/blob")

// attrBytes is how many bytes a span's write stored or its read returned.
const attrBytes = attribute.Key("hdc.blob.bytes")

// Traced is s with a span for each write ("blob put") and each read ("blob
// read", from the opening to the closing of what it returns), under the
// request's trace. A span names the blob's key (the hash of its content)
// and its size, never a byte of it.
func Traced(s Store) Store { return traced{s} }

type traced struct{ Store }

func (t traced) Put(ctx context.Context, r io.Reader) (string, int64, error) {
	ctx, span := tracer.Start(ctx, "blob put")
	key, n, err := t.Store.Put(ctx, r)
	span.SetAttributes(attribute.String("hdc.blob.key", key), attrBytes.Int64(n))
	end(span, err)
	return key, n, err
}

func (t traced) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	ctx, span := tracer.Start(ctx, "blob read", trace.WithAttributes(attribute.String("hdc.blob.key", key)))
	rc, err := t.Store.Open(ctx, key)
	if err != nil {
		end(span, err)
		return nil, err
	}
	return &tracedReader{ReadCloser: rc, span: span}, nil
}

// tracedReader ends its read's span when it is closed.
type tracedReader struct {
	io.ReadCloser
	span trace.Span
	n    int64
}

func (r *tracedReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n += int64(n)
	return n, err
}

func (r *tracedReader) Close() error {
	err := r.ReadCloser.Close()
	r.span.SetAttributes(attrBytes.Int64(r.n))
	end(r.span, err)
	return err
}

// end ends span, an error when err is one.
func end(span trace.Span, err error) {
	if err != nil {
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
