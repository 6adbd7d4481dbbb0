package contract

// RouteClass names a class of routes whose requests a client's limits count apart.
type RouteClass string

// The route classes a client's limits count apart.
const (
	ClassLogin   RouteClass = "login" // login and refresh
	ClassReads   RouteClass = "reads"
	ClassWrites  RouteClass = "writes"
	ClassUploads RouteClass = "uploads"
)

// Rate is a limit of PerSecond requests a second on average, Burst at once (GCRA).
type Rate struct {
	PerSecond float64 `json:"per_second"`
	Burst     int     `json:"burst"`
}

// Limits are a client's allowances; a class missing from Rates, or an
// UploadBytesPerDay of 0, takes the default's.
type Limits struct {
	Rates             map[RouteClass]Rate `json:"rates,omitempty"`
	UploadBytesPerDay int64               `json:"upload_bytes_per_day,omitempty"`
}

// ClientLimits are one client's overrides as the key plane serves them.
type ClientLimits struct {
	ClientID string `json:"client_id"`
	Limits   Limits `json:"limits"`
}

// PathClientLimits is the key plane's route of the clients' limits. GET:
// every override, paged ?after=<client_id>&limit=N →
// {"limits":[ClientLimits…],"next":"<client_id or empty>"}; GET
// PathClientLimits+"/{client_id}": one ClientLimits or 404 not_found.
const PathClientLimits = "/keyplane/v1/client-limits" // GET: every override, paged ?after=<client_id>&limit=N → {"limits":[ClientLimits…],"next":"<client_id or empty>"}; GET PathClientLimits+"/{client_id}": one ClientLimits or 404 not_found
