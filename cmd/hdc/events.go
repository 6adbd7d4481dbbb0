package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/health-data-connect/hdc/backend/webhook"
	"github.com/health-data-connect/hdc/internal/contract"
	"github.com/health-data-connect/hdc/internal/problem"
)

// publishTimeout bounds a publication.
const publishTimeout = 30 * time.Second

// maxAnswer bounds what is read of the backend's answer.
const maxAnswer = 1 << 20

func newEventsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Publish webhook events to the backend",
	}
	var (
		ev       webhook.Event
		data     string
		internal string
	)
	publish := &cobra.Command{
		Use:   "publish --workspace W --type T --data JSON",
		Short: "Publish an event; the backend delivers it to the workspace's subscriptions",
		Long: `Publish an event of type T (` + strings.Join(webhook.Events, ", ") + `)
in workspace W, with data JSON (an object), on the backend's internal listener. The
backend stores it with one delivery per matching subscription before answering, then
delivers it at least once. Prints {"id", "deliveries"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !json.Valid([]byte(data)) {
				return errors.New("--data is not JSON")
			}
			ev.Data = json.RawMessage(data)
			body, err := json.Marshal(ev)
			if err != nil {
				return err
			}
			url := strings.TrimSuffix(internal, "/") + contract.PathEvents
			req, err := http.NewRequestWithContext(cmd.Context(), http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				return fmt.Errorf("--backend-internal: %w", err)
			}
			req.Header.Set("Content-Type", "application/json")
			res, err := (&http.Client{Timeout: publishTimeout}).Do(req)
			if err != nil {
				return err
			}
			defer res.Body.Close()
			answer, err := io.ReadAll(io.LimitReader(res.Body, maxAnswer))
			if err != nil {
				return err
			}
			if res.StatusCode != http.StatusAccepted {
				return answerError(res, answer)
			}
			var pub webhook.Published
			if err := json.Unmarshal(answer, &pub); err != nil {
				return fmt.Errorf("unexpected answer from the backend: %w", err)
			}
			return printJSON(cmd.OutOrStdout(), pub)
		},
	}
	f := publish.Flags()
	f.StringVar(&ev.WorkspaceID, "workspace", "", "workspace id")
	f.StringVar(&ev.Type, "type", "", "event type: "+strings.Join(webhook.Events, ", "))
	f.StringVar(&data, "data", "", "the event's data, a JSON object")
	f.StringVar(&internal, "backend-internal", envOr("HDC_BACKEND_INTERNAL", "http://127.0.0.1:9081"),
		"base URL of the backend's internal listener (env HDC_BACKEND_INTERNAL)")
	for _, name := range []string{"workspace", "type", "data"} {
		publish.MarkFlagRequired(name)
	}
	cmd.AddCommand(publish)
	return cmd
}

// answerError words a refused publication: the problem's code and detail
// when the backend sent one, the status otherwise.
func answerError(res *http.Response, body []byte) error {
	var p problem.Problem
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt == problem.ContentType && json.Unmarshal(body, &p) == nil {
		return fmt.Errorf("the backend refused the event (%d %s): %s", res.StatusCode, p.Code, p.Detail)
	}
	return fmt.Errorf("the backend answered %s", res.Status)
}
