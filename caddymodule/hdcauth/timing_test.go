package hdcauth

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/health-data-connect/hdc/caddymodule/edge"
	"github.com/health-data-connect/hdc/internal/contract"
)

func TestTimedStatus(t *testing.T) {
	tests := []struct {
		name  string
		serve func(w http.ResponseWriter) error
		want  string
	}{
		{"nothing written", func(w http.ResponseWriter) error { return nil }, "200"},
		{"a body first", func(w http.ResponseWriter) error { _, err := w.Write([]byte("{}")); return err }, "200"},
		{"a body read from a reader", func(w http.ResponseWriter) error {
			_, err := w.(io.ReaderFrom).ReadFrom(strings.NewReader("{}"))
			return err
		}, "200"},
		{"a status", func(w http.ResponseWriter) error { w.WriteHeader(http.StatusCreated); return nil }, "201"},
		{"the first status counts", func(w http.ResponseWriter) error {
			w.WriteHeader(http.StatusAccepted)
			w.WriteHeader(http.StatusTeapot)
			return nil
		}, "202"},
		{"an informational status does not", func(w http.ResponseWriter) error {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusNoContent)
			return nil
		}, "204"},
		{"a status after the body does not", func(w http.ResponseWriter) error {
			_, _ = w.Write([]byte("{}"))
			w.WriteHeader(http.StatusBadRequest)
			return nil
		}, "200"},
		{"a handler error's status", func(w http.ResponseWriter) error {
			return caddyhttp.Error(http.StatusBadGateway, errors.New("down"))
		}, "502"},
		{"a handler error without one", func(w http.ResponseWriter) error {
			return caddyhttp.HandlerError{Err: errors.New("down")}
		}, "500"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := observations(t, tt.want)
			_ = timed(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, contract.PathLogin, nil), tt.serve)
			if got := observations(t, tt.want) - before; got != 1 {
				t.Fatalf("%d observations with code %s, want 1", got, tt.want)
			}
		})
	}
}

// TestTimedPassesThrough checks that what a handler below hdc_auth writes,
// flushes or reads from reaches the client's writer.
func TestTimedPassesThrough(t *testing.T) {
	w := httptest.NewRecorder()
	_ = timed(w, httptest.NewRequest(http.MethodPost, contract.PathLogin, nil), func(w http.ResponseWriter) error {
		w.Header().Set("X-Test", "1")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, "a")
		_, _ = w.(io.ReaderFrom).ReadFrom(strings.NewReader("b"))
		return http.NewResponseController(w).Flush()
	})
	if w.Code != http.StatusAccepted || w.Body.String() != "ab" || w.Header().Get("X-Test") != "1" || !w.Flushed {
		t.Fatalf("the client's writer got %d %q %v, flushed %v", w.Code, w.Body, w.Header(), w.Flushed)
	}
	t.Run("a plain assertion of http.Flusher", func(t *testing.T) {
		w := httptest.NewRecorder()
		_ = timed(w, httptest.NewRequest(http.MethodPost, contract.PathLogin, nil), func(w http.ResponseWriter) error {
			w.(http.Flusher).Flush()
			return nil
		})
		if !w.Flushed {
			t.Fatal("the flush did not reach the client's writer")
		}
	})
	t.Run("a hijack the writer below cannot do", func(t *testing.T) {
		_ = timed(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, contract.PathLogin, nil), func(w http.ResponseWriter) error {
			if _, _, err := w.(http.Hijacker).Hijack(); !errors.Is(err, http.ErrNotSupported) {
				t.Fatalf("hijack: %v, want http.ErrNotSupported", err)
			}
			return nil
		})
	})
}

// observations is how many answers to a login with code were timed.
func observations(t *testing.T, code string) uint64 {
	t.Helper()
	status, err := strconv.Atoi(code)
	if err != nil {
		t.Fatal(err)
	}
	var m dto.Metric
	h := edge.Metrics.Duration(contract.Route(contract.PathLogin), contract.Method(http.MethodPost), status)
	if err := h.(prometheus.Metric).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetHistogram().GetSampleCount()
}
