package contract

import (
	"time"

	"github.com/health-data-connect/hdc/internal/clientkey"
)

// The key plane: the backend hands each edge the clients' shared keys over
// the hop (RoleEdge only) and tells it which kids changed.
const (
	// PathKey answers one key by kid (a ClientKey), or 404.
	PathKey = "/internal/v1/keys/{kid}"
	// PathKeyChanges answers the changes after a sequence number
	// (KeyChanges): ?after=N, and wait=D to hold the request up to D
	// (at most MaxKeyChangesWait) until there is one.
	PathKeyChanges = "/internal/v1/key-changes"
	// PathKeyFilter answers a filter of every kid there is (KeyFilter),
	// which an edge loads before it follows the changes after its Last.
	PathKeyFilter = "/internal/v1/key-filter"
	// PathEdgeReport takes an edge's report (EdgeReport), POST, and
	// answers 204: which edge it is, the key plane's number it applied
	// and the kids it used since its last report.
	PathEdgeReport = "/internal/v1/edge-reports"
)

// MaxKeyChangesWait bounds how long the changes route holds a request.
const MaxKeyChangesWait = 30 * time.Second

// MaxKeyChanges bounds the changes one answer carries; an edge that is
// further behind asks again after the last.
const MaxKeyChanges = 1000

// ClientKey is a client's shared key as the backend hands it to an edge:
// the key as listed (clientkey.Listed), its secret and the number of its
// last change. Secret is the shared key string in the clear: the hop is
// mutually authenticated TLS, and the route serves RoleEdge alone.
type ClientKey struct {
	clientkey.Listed
	Secret string `json:"secret"`
	// Seq is the sequence number of the key's last change.
	Seq int64 `json:"seq"`
}

// WireKey is k, whose last change is numbered seq, as the key plane
// hands it.
func WireKey(k clientkey.Key, seq int64) ClientKey {
	return ClientKey{Listed: k.Listed(), Secret: k.Secret, Seq: seq}
}

// Key is the key c hands: the inverse of WireKey.
func (c *ClientKey) Key() clientkey.Key { return c.Listed.Key(c.Secret) }

// KeyChanges answers PathKeyChanges: the changes after the sequence number
// asked, oldest first, and Last, the newest sequence number there is (the
// next request's after when Changes is not full).
type KeyChanges struct {
	Changes []clientkey.Change `json:"changes"`
	Last    int64              `json:"last"`
}

// KeyFilter answers PathKeyFilter: a Bloom filter of every kid changed
// through the sequence number Last (github.com/bits-and-blooms/bloom/v3's
// binary form, package kidfilter), the kids it was sized for and those it
// holds.
type KeyFilter struct {
	Bloom    []byte `json:"bloom"`
	Capacity uint   `json:"capacity"`
	Count    uint   `json:"count"`
	Last     int64  `json:"last"`
}

// MaxKeyFilter bounds the size of a KeyFilter answer: a filter sized for
// ten million kids, in base64.
const MaxKeyFilter = 64 << 20

// EdgeReportEvery is how often an edge reports to PathEdgeReport.
const EdgeReportEvery = 5 * time.Second

// MaxEdgeReportUses bounds the uses one EdgeReport carries: an edge that
// has more sends the rest in the reports that follow at once.
const MaxEdgeReportUses = 1000

// MaxEdgeReport bounds the size of an EdgeReport's body: MaxEdgeReportUses
// uses of kids of the longest, with room to spare.
const MaxEdgeReport = 256 << 10

// EdgeReport is what an edge tells the backends (PathEdgeReport) every
// EdgeReportEvery. The backend names the edge by Instance and by the
// subject and serial number of its client certificate.
type EdgeReport struct {
	// Instance is the edge's id (a UUID, IsUUID), made at random when it
	// starts to follow the key plane and kept until it stops.
	Instance string `json:"instance"`
	// AppliedSeq is the number of the last key plane change the edge
	// applied, 0 before its feed's first answer.
	AppliedSeq int64 `json:"applied_seq"`
	// Uses are the kids the edge used since the last report the backend
	// took, each once, with its last use.
	Uses []KidUse `json:"uses"`
}

// KidUse is a kid's last use at an edge.
type KidUse struct {
	Kid      string    `json:"kid"`
	LastUsed time.Time `json:"last_used"`
}
