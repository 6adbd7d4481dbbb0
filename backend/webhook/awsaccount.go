package webhook

import (
	"errors"
	"net/url"
	"strings"
)

// ErrAWSAccountNotAllowed is returned by Rules.Parse for an SQS queue or a
// Lambda function in an AWS account the operator did not allow. Deliveries
// to AWS run under the backend's own AWS credentials: a tenant who could
// name any account's queue or function would have the backend act for it
// there (a confused deputy). Its message names the setting, so that a
// tenant can ask the operator for the right one.
var ErrAWSAccountNotAllowed = errors.New("SQS and Lambda endpoints must be in an AWS account the operator allows " +
	"(the backend's HDC_WEBHOOK_AWS_ACCOUNTS, empty by default); this endpoint's account is not one of them")

// AWSAccount returns the AWS account id of an SQS queue URL
// (https://sqs.<region>.amazonaws.com/<account>/<queue>) or a Lambda
// function ARN (arn:aws:lambda:<region>:<account>:function:<name>), as
// Rules.Parse admits them, and "" for any other protocol.
func AWSAccount(protocol, endpoint string) string {
	switch protocol {
	case ProtocolLambda:
		if parts := strings.Split(endpoint, ":"); len(parts) > 4 {
			return parts[4]
		}
	case ProtocolSQS:
		if u, err := url.Parse(endpoint); err == nil {
			account, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
			return account
		}
	}
	return ""
}

// AWSAccountAllowed reports whether an endpoint of protocol may be
// delivered to under allowed, the operator's AWS accounts: an HTTP(S)
// endpoint always, an SQS queue or a Lambda function when its account is
// one of them.
func AWSAccountAllowed(protocol, endpoint string, allowed []string) bool {
	if protocol != ProtocolSQS && protocol != ProtocolLambda {
		return true
	}
	account := AWSAccount(protocol, endpoint)
	for _, a := range allowed {
		if a == account {
			return true
		}
	}
	return false
}
