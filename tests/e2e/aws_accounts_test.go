package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/health-data-connect/hdc/tests/hdctest"
)

// TestAWSTargetsOnlyInAllowedAccounts (second review, finding 4): through
// the real edge and backend, an SQS queue or a Lambda function is
// registered only in an account of HDC_WEBHOOK_AWS_ACCOUNTS; any other
// is refused with a problem naming the setting.
func TestAWSTargetsOnlyInAllowedAccounts(t *testing.T) {
	t.Parallel()
	s := hdctest.StartStack(t, "HDC_WEBHOOK_AWS_ACCOUNTS=123456789012")
	c := s.NewClient("aws-accounts")
	tk := s.Login(c, false, "")
	tests := []struct {
		name, endpoint string
		ok             bool
	}{
		{"a function of the allowed account", "arn:aws:lambda:eu-west-1:123456789012:function:clinic-events", true},
		{"a queue of the allowed account", "https://sqs.eu-west-1.amazonaws.com/123456789012/clinic-events", true},
		{"another account's function", "arn:aws:lambda:eu-west-1:210987654321:function:platform-admin", false},
		{"another account's queue", "https://sqs.eu-west-1.amazonaws.com/210987654321/platform", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Send(c, false, "POST", hdctest.SubsPath, []byte(`{"endpoint":"`+tt.endpoint+`"}`), hdctest.Bearer(tk))
			if tt.ok {
				if r.Status != http.StatusOK {
					t.Fatalf("register: %s", r)
				}
				return
			}
			hdctest.ExpectProblem(t, r, http.StatusBadRequest, "endpoint_not_allowed")
			if !strings.Contains(string(r.Body), "HDC_WEBHOOK_AWS_ACCOUNTS") {
				t.Fatalf("the refusal does not name the setting: %s", r)
			}
		})
	}
}
