package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
)

// traceEdges points the traces of the edges the bench starts at a sink in
// this process, every request sampled (--tracing): what tracing on costs,
// the spans' export included. The sink reads each export and answers it
// as a collector does, with an empty export response. It returns the
// function that stops the sink.
func traceEdges() (stop func()) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	for k, v := range map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL,
		"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "OTEL_TRACES_SAMPLER": "always_on"} {
		os.Setenv(k, v) // the edges inherit the environment
	}
	return sink.Close
}
