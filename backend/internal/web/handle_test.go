package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/health-data-connect/hdc/internal/problem"
)

func TestProblemsHandler(t *testing.T) {
	errGone := errors.New("gone")
	gone := problem.New(http.StatusGone, problem.CodeNotFound, "it is gone")
	tests := []struct {
		name     string
		err      error
		status   int
		code     string
		logged   bool
		observed bool
	}{
		{"success", nil, http.StatusOK, "", false, false},
		{"a problem", BadRequest("no"), http.StatusBadRequest, problem.CodeInvalidRequest, false, true},
		{"a wrapped problem", fmt.Errorf("decoding: %w", TooLarge("big")), http.StatusRequestEntityTooLarge, problem.CodePayloadTooLarge, false, true},
		{"a known sentinel", fmt.Errorf("looking up: %w", errGone), http.StatusGone, problem.CodeNotFound, false, true},
		{"anything else", errors.New("disk on fire"), http.StatusInternalServerError, problem.CodeInternalError, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.InfoLevel)
			var observed []string
			ps := &Problems{
				Known:   ErrorMap{{Err: errGone, Problem: gone}},
				Log:     zap.New(core),
				Observe: func(name string, p *problem.Problem) { observed = append(observed, name+" "+p.Code) },
			}
			h := ps.Handler("thing", func(w http.ResponseWriter, r *http.Request) error {
				if tt.err == nil {
					w.WriteHeader(http.StatusOK)
				}
				return tt.err
			})
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest("GET", "/", nil))
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d", w.Code, tt.status)
			}
			if tt.code != "" {
				var p problem.Problem
				if err := json.Unmarshal(w.Body.Bytes(), &p); err != nil || p.Code != tt.code || w.Header().Get("Content-Type") != problem.ContentType {
					t.Fatalf("body %s (%v)", w.Body, err)
				}
			}
			if got := logs.FilterMessage("request failed").Len() == 1; got != tt.logged {
				t.Fatalf("logged %v, want %v", got, tt.logged)
			}
			if (len(observed) == 1 && observed[0] == "thing "+tt.code) != tt.observed {
				t.Fatalf("observed %v", observed)
			}
		})
	}
}
