package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"time"
)

// uploadResult is the encrypted upload through the edge.
type uploadResult struct {
	FileMiB        int     `json:"file_mib"`
	EnvelopeBytes  int     `json:"envelope_bytes"`
	Seconds        float64 `json:"seconds"`
	FileMBps       float64 `json:"file_mb_per_s"`
	IdleRSSMiB     float64 `json:"idle_rss_mib"`
	PeakRSSMiB     float64 `json:"peak_rss_mib"`
	AboveIdleMiB   float64 `json:"peak_above_idle_mib"`
	UpstreamIntact bool    `json:"upstream_intact"`
}

// benchUpload sends an encrypted upload of fileMiB MiB of file bytes (as the
// JSON {"file": "<base64>"} the API takes) through a fresh hdc-edge, and
// reads the edge's resident memory at idle and at its peak from /proc.
func benchUpload(ctx context.Context, env *benchEnv, fileMiB int) (*uploadResult, error) {
	file := make([]byte, fileMiB<<20)
	_, _ = rand.Read(file)
	plaintext := make([]byte, 0, base64.StdEncoding.EncodedLen(len(file))+16)
	plaintext = append(plaintext, `{"file":"`...)
	plaintext = base64.StdEncoding.AppendEncode(plaintext, file)
	plaintext = append(plaintext, `"}`...)
	want := sha256.Sum256(plaintext)
	req := env.encryptedRequest(env.cbc, uploadPath, plaintext)
	plaintext, file = nil, nil

	ed, err := env.startEdge(registryEdge, false)
	if err != nil {
		return nil, err
	}
	defer ed.stop()
	client := &http.Client{Timeout: 5 * time.Minute}
	// Warm the edge with a small encrypted request, then let it settle.
	if err := checkEncrypted(client, ed, env.encryptedRequest(env.cbc, echoPath, jsonPayload(1024)), env.cbc.key); err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	idle, _, err := ed.memory()
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, body, err := send(client, ed, req)
	if err != nil {
		return nil, err
	}
	elapsed := time.Since(start)
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("upload answered %d: %.300s", resp.StatusCode, body)
	}
	_, peak, err := ed.memory()
	if err != nil {
		return nil, err
	}
	var seen uploadSeen
	select {
	case seen = <-env.lastHash:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return &uploadResult{
		FileMiB: fileMiB, EnvelopeBytes: len(req.body), Seconds: elapsed.Seconds(),
		FileMBps:   float64(fileMiB<<20) / elapsed.Seconds() / 1e6,
		IdleRSSMiB: float64(idle) / (1 << 20), PeakRSSMiB: float64(peak) / (1 << 20),
		AboveIdleMiB:   float64(peak-idle) / (1 << 20),
		UpstreamIntact: seen.sha256 == hex.EncodeToString(want[:]),
	}, nil
}
