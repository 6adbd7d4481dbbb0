package trail

import (
	"bufio"
	"context"
	"errors"
	"io"

	"github.com/health-data-connect/hdc/backend/audit"
	"github.com/health-data-connect/hdc/backend/audit/fhirview"
)

// Export writes the records q selects (as Search selects them, from
// q.Cursor on, at most q.Limit when positive) to out as FHIR R4 AuditEvent
// resources, one per line: the NDJSON of FHIR bulk data export
// (application/fhir+ndjson). It records the export for the person of ctx
// before it writes anything, and fails without writing when it cannot.
func (s *Service) Export(ctx context.Context, q Query, out io.Writer) error {
	if err := q.Validate(); err != nil {
		return err
	}
	from, err := decodePosition(q, s.now())
	if err != nil {
		return err
	}
	if err := s.recordRead(ctx, audit.AuditExport, q); err != nil {
		return err
	}
	w := bufio.NewWriter(out)
	_, err = s.scan(ctx, &walk{q: q, from: from, want: q.Limit}, func(r audit.Record) error {
		b, err := fhirview.AuditEvent(r)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	})
	return errors.Join(err, w.Flush())
}
