package tests

import (
	"net/http"
	"strings"
	"testing"
)

// TestAWSTargetsOnlyInAllowedAccounts (second review, finding 4): through
// the real edge and backend, an SQS queue or a Lambda function is
// registered only in an account of HDC_WEBHOOK_AWS_ACCOUNTS; any other
// is refused with a problem naming the setting.
func TestAWSTargetsOnlyInAllowedAccounts(t *testing.T) {
	s := startStack(t, "HDC_WEBHOOK_AWS_ACCOUNTS=123456789012")
	c := s.newClient("aws-accounts")
	tk := s.login(c, false, "")
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
			r := s.send(c, false, "POST", subsPath, []byte(`{"endpoint":"`+tt.endpoint+`"}`), bearer(tk))
			if tt.ok {
				if r.status != http.StatusOK {
					t.Fatalf("register: %s", r)
				}
				return
			}
			expectProblem(t, r, http.StatusBadRequest, "endpoint_not_allowed")
			if !strings.Contains(string(r.body), "HDC_WEBHOOK_AWS_ACCOUNTS") {
				t.Fatalf("the refusal does not name the setting: %s", r)
			}
		})
	}
}
