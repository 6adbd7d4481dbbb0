package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// heapCount is what a Go process has allocated since it started: bytes
// and objects, runtime.MemStats' TotalAlloc and Mallocs. Unlike the
// collector's work, both repeat exactly for the same requests.
type heapCount struct {
	Bytes   int64 `json:"TotalAlloc"`
	Objects int64 `json:"Mallocs"`
}

// readHeapCount reads an edge's heapCount from its admin API's
// /debug/vars, which Caddy serves from the standard library's expvar.
func readHeapCount(client *http.Client, admin string) (heapCount, error) {
	resp, err := client.Get("http://" + admin + "/debug/vars")
	if err != nil {
		return heapCount{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return heapCount{}, fmt.Errorf("/debug/vars answered %d", resp.StatusCode)
	}
	return parseHeapCount(resp.Body)
}

// parseHeapCount reads the "memstats" member of expvar's JSON.
func parseHeapCount(r io.Reader) (heapCount, error) {
	var vars struct {
		MemStats *heapCount `json:"memstats"`
	}
	if err := json.NewDecoder(r).Decode(&vars); err != nil {
		return heapCount{}, err
	}
	if vars.MemStats == nil || vars.MemStats.Objects == 0 {
		return heapCount{}, fmt.Errorf("no memstats in /debug/vars")
	}
	return *vars.MemStats, nil
}
