package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/health-data-connect/hdc/backend/store"
)

// SQS and Lambda deliveries are not exposed to SSRF the way HTTP ones are:
// the SDK sends them to the endpoint it resolves for the region, which is
// AWS's own (*.amazonaws.com), or to the endpoint the operator configured
// (AWS_ENDPOINT_URL_SQS / AWS_ENDPOINT_URL_LAMBDA / AWS_ENDPOINT_URL, or
// Config.SQSEndpoint), never to a host a subscriber chose. A subscriber
// chooses only a queue URL or function ARN, whose shape and region
// registration validated (backend/webhook); the queue URL travels in the
// request body, not as the address dialled.
//
// The SDKs' own retries are off: the outbox retries, on its schedule, and
// an attempt stays within the delivery timeout.

// sqsSender sends messages to SQS queues, the webhook headers as message
// attributes.
type sqsSender struct {
	client *sqs.Client
}

func newSQSSender(cfg aws.Config, endpoint string) *sqsSender {
	return &sqsSender{client: sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.Retryer = aws.NopRetryer{}
	})}
}

// send implements sender. A FIFO queue gets the subscription as message
// group (ordered per subscription) and the webhook-id as deduplication id,
// so SQS drops our retries of a message it already has.
func (s *sqsSender) send(ctx context.Context, sub store.Subscription, m Message) Result {
	attrs := map[string]sqstypes.MessageAttributeValue{}
	for k, v := range m.Headers() {
		attrs[k] = sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	in := &sqs.SendMessageInput{
		QueueUrl:          aws.String(sub.Endpoint),
		MessageBody:       aws.String(string(m.Body)),
		MessageAttributes: attrs,
	}
	if strings.HasSuffix(sub.Endpoint, ".fifo") {
		in.MessageGroupId = aws.String(sub.ID)
		in.MessageDeduplicationId = aws.String(m.ID)
	}
	_, err := s.client.SendMessage(ctx, in, func(o *sqs.Options) {
		if r := queueRegion(sub.Endpoint); r != "" {
			o.Region = r
		}
	})
	return awsResult(err)
}

// queueRegion returns the region of an AWS queue URL
// (sqs.<region>.amazonaws.com, sqs.<region>.api.aws,
// <region>.queue.amazonaws.com), or "" for another host (an emulator's),
// which is signed for the configured region.
func queueRegion(queueURL string) string {
	u, err := url.Parse(queueURL)
	if err != nil {
		return ""
	}
	host := u.Hostname()
	labels := strings.Split(host, ".")
	isAWS := strings.HasSuffix(host, ".amazonaws.com") || strings.HasSuffix(host, ".amazonaws.com.cn") ||
		strings.HasSuffix(host, ".api.aws")
	switch {
	case !isAWS || len(labels) < 3:
		return ""
	case labels[0] == "sqs":
		return labels[1]
	case labels[1] == "queue":
		return labels[0]
	}
	return ""
}

// lambdaSender invokes Lambda functions asynchronously.
type lambdaSender struct {
	client *lambda.Client
}

func newLambdaSender(cfg aws.Config) *lambdaSender {
	return &lambdaSender{client: lambda.NewFromConfig(cfg, func(o *lambda.Options) {
		o.Retryer = aws.NopRetryer{}
	})}
}

// LambdaEvent is the payload a function receives: the webhook headers and
// the body, which the function verifies as an HTTP receiver would.
type LambdaEvent struct {
	Headers map[string]string `json:"headers"`
	Body    string            `json:"body"`
}

// send implements sender with an asynchronous (Event) invocation: Lambda
// queues the event and answers 202.
func (l *lambdaSender) send(ctx context.Context, sub store.Subscription, m Message) Result {
	payload, err := json.Marshal(LambdaEvent{Headers: m.Headers(), Body: string(m.Body)})
	if err != nil {
		return Result{Outcome: OutcomeInvalidEndpoint, Permanent: true, Err: err}
	}
	_, err = l.client.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(sub.Endpoint),
		InvocationType: lambdatypes.InvocationTypeEvent,
		Payload:        payload,
	}, func(o *lambda.Options) {
		// arn:<partition>:lambda:<region>:<account>:function:<name>[:<qualifier>]
		if parts := strings.Split(sub.Endpoint, ":"); len(parts) > 3 && parts[3] != "" {
			o.Region = parts[3]
		}
	})
	return awsResult(err)
}

// awsResult classifies the error of an SQS or Lambda call. An error the
// service answered with is retried whatever it is (throttling, a missing
// queue or function, a denied permission): an operator or the subscriber
// can fix each before the horizon. Its outcome is "aws_" and the error code.
func awsResult(err error) Result {
	if err == nil {
		return Result{Outcome: OutcomeDelivered, Delivered: true}
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return failure(err)
	}
	r := Result{Outcome: "aws_" + safeCode(apiErr.ErrorCode()), Err: redact(err)}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		r.StatusCode = re.HTTPStatusCode()
	}
	return r
}

// safeCode keeps an error code fit for an outcome: at most 64 letters,
// digits, '.', '_' and '-'.
func safeCode(code string) string {
	code = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
			return r
		}
		return -1
	}, code)
	if code == "" {
		return "error"
	}
	return code[:min(len(code), 64)]
}
