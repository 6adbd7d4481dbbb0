package contract

// Paths of the public API, which clients call through the edge.
const (
	PathLogin   = "/connect-auth/v1/account/login"
	PathRefresh = "/connect-auth/v1/account/refresh-token"
	// PathRefreshCompat is the refresh route of the API's first version,
	// kept for the clients written against it: the refresh token in the
	// body is the credential, no bearer token is needed.
	PathRefreshCompat = "/connect-auth/v1/account/refresh"
	PathRetrieve      = "/health/api/v1/fhir/retrieve"
	// PathAuditEvents serves the caller's workspace's audit trail as a
	// FHIR searchset Bundle of AuditEvent resources.
	PathAuditEvents   = "/health/api/v1/fhir/AuditEvent"
	PathSubscriptions = "/notification/v1/connect/webhook/subscriptions"
	PathUpload        = "/mr/api/v2/docs"
	// PathJWKS is served by the backend's internal listener, and by the
	// edge, which proxies it.
	PathJWKS = "/.well-known/jwks.json"
)

// Paths of the backend's internal listener, for the platform only.
const (
	PathResources = "/internal/v1/records/{care_context_id}/resources"
	PathEvents    = "/internal/v1/events"
	PathHealth    = "/healthz"
	PathReady     = "/readyz"
	PathMetrics   = "/metrics"
)
