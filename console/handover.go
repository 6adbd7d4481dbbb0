package console

import (
	"net/http"

	"github.com/health-data-connect/hdc/internal/apiclient"
	"github.com/health-data-connect/hdc/internal/problem"
)

// Handover is what the credentials file the console hands over holds
// besides what the API issued: the API's base URL and, when a private
// authority issued the edge's certificate, that authority's certificate
// (PEM); as hdc clients create --base-url and --edge-ca take them.
type Handover struct {
	BaseURL, EdgeCA string
}

// credentialsFile is the credentials file of client with what the API
// issued it: the file hdc clients create (a secret) and hdc keys add or
// rotate (a key) write with --credentials-out into a new file, by the same
// function (apiclient.Credentials.Hand).
func (s *Server) credentialsFile(client string, issued apiclient.Handover) []byte {
	c := apiclient.Credentials{ClientID: client}
	issued.BaseURL, issued.EdgeCA = s.handover.BaseURL, s.handover.EdgeCA
	c.Hand(issued)
	return c.Encode()
}

// errFileGone answers a credentials file asked for again, or too late.
var errFileGone = problem.New(http.StatusGone, problem.CodeNotFound,
	"This credentials file was downloaded once already, or its 5 minutes passed: the console keeps no copy of a secret. "+
		"Rotate the client's key (or, for a client's secret, disable it and create another) for a new one.")

// downloadCredentials downloads the credentials file of the form's result
// of the path, once, within the secret's 5 minutes.
func (s *Server) downloadCredentials(w http.ResponseWriter, r *http.Request) {
	res := sessionOf(r).results
	key := r.PathValue("key")
	file, name, ok := res.takeFile(key)
	switch {
	case !ok:
		s.showError(w, errNoResult)
	case file == nil:
		s.showError(w, errFileGone)
	default:
		d := &download{w: w, contentType: "application/json", name: name}
		_, _ = d.Write(file)
	}
}
