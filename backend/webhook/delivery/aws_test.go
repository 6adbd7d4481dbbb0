package delivery

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/Admiral-Piett/goaws/app/models"
	"github.com/Admiral-Piett/goaws/app/servertest"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/sirupsen/logrus"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/health-data-connect/hdc/backend/store"
	"github.com/health-data-connect/hdc/backend/webhook"
)

// testAWS is an AWS configuration with static credentials, as tests sign
// requests to local servers.
func testAWS(endpoint string) aws.Config {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "test-secret", ""),
	}
	if endpoint != "" {
		cfg.BaseEndpoint = aws.String(endpoint)
	}
	return cfg
}

func TestQueueRegion(t *testing.T) {
	tests := map[string]string{
		"https://sqs.eu-west-1.amazonaws.com/123456789012/q":     "eu-west-1",
		"https://sqs.cn-north-1.amazonaws.com.cn/123456789012/q": "cn-north-1",
		"https://sqs.ap-south-1.api.aws/123456789012/q":          "ap-south-1",
		"https://us-east-2.queue.amazonaws.com/123456789012/q":   "us-east-2",
		"http://127.0.0.1:4100/100010001000/q":                   "",
		"https://sqs.example.com/123456789012/q":                 "",
		"::":                                                     "",
	}
	for in, want := range tests {
		t.Run(in, func(t *testing.T) {
			if got := queueRegion(in); got != want {
				t.Errorf("queueRegion(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

// TestSQSDelivery sends with the real SDK to an in-process SQS server
// (goaws, whose state is global: do not run this test in parallel) and
// receives the message with its attributes.
func TestSQSDelivery(t *testing.T) {
	logrus.SetOutput(io.Discard)
	srv, err := servertest.New("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Quit() })
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL(), "http://"))
	models.CurrentEnvironment.Host, models.CurrentEnvironment.Port = "127.0.0.1", port
	models.CurrentEnvironment.Region, models.CurrentEnvironment.AccountID = "", "100010001000"

	client := sqs.NewFromConfig(testAWS(srv.URL()))
	q, err := client.CreateQueue(t.Context(), &sqs.CreateQueueInput{QueueName: aws.String("hdc-events")})
	if err != nil {
		t.Fatal(err)
	}
	// The queue URL passes registration with the emulator configured.
	base, _ := url.Parse(srv.URL())
	spec, err := webhook.Rules{SQSEndpoint: base, AWSAccounts: []string{"100010001000"}}.Parse(t.Context(), "w1", []byte(`{"endpoint":"`+*q.QueueUrl+`","protocol":"SQS endpoint"}`))
	if err != nil {
		t.Fatalf("queue URL %s refused: %v", *q.QueueUrl, err)
	}

	const key = "sqs-signing-key-0123456789"
	h := start(t, func(c *Config) {
		c.Guard = nil // SQS does not go through the HTTP guard
		c.AWS = testAWS("")
		c.SQSEndpoint = srv.URL()
		c.AWSAccounts = []string{"100010001000"}
	})
	h.subscribe(spec.Endpoint, spec.Protocol, key)
	missing := strings.Replace(spec.Endpoint, "hdc-events", "missing", 1)
	h.subscribe(missing, webhook.ProtocolSQS, "")
	var id string
	for _, dl := range h.publish("receipt.created", `{"receipt_id":"r-9"}`) {
		d, attempts := h.attempted(dl)
		if d.Subscription.Endpoint == missing {
			// A queue that does not exist is an AWS error, retried.
			if d.Status != store.DeliveryPending || !strings.HasPrefix(attempts[0].Outcome, "aws_") {
				t.Fatalf("delivery to a missing queue: %+v, attempts %q", d, outcomes(attempts))
			}
			continue
		}
		id = dl
		if d.Status != store.DeliveryDelivered || !slices.Equal(outcomes(attempts), []string{"delivered"}) {
			t.Fatalf("delivery %+v, attempts %q", d, outcomes(attempts))
		}
	}

	out, err := client.ReceiveMessage(t.Context(), &sqs.ReceiveMessageInput{
		QueueUrl: q.QueueUrl, MaxNumberOfMessages: 10, MessageAttributeNames: []string{"All"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 {
		t.Fatalf("%d messages in the queue, want 1", len(out.Messages))
	}
	msg := out.Messages[0]
	header := http.Header{}
	for name, v := range msg.MessageAttributes {
		if aws.ToString(v.DataType) != "String" {
			t.Fatalf("attribute %s has type %s", name, aws.ToString(v.DataType))
		}
		header.Set(name, aws.ToString(v.StringValue))
	}
	if header.Get("webhook-id") != MessageID(id) || len(msg.MessageAttributes) != 3 {
		t.Fatalf("attributes %v, want the three webhook headers with id %s", header, MessageID(id))
	}
	wh, _ := standardwebhooks.NewWebhookRaw([]byte(key))
	if err := wh.Verify([]byte(aws.ToString(msg.Body)), header); err != nil {
		t.Fatalf("the message does not verify: %v", err)
	}
	var p Payload
	if err := json.Unmarshal([]byte(aws.ToString(msg.Body)), &p); err != nil || p.Type != "receipt.created" || string(p.Data) != `{"receipt_id":"r-9"}` {
		t.Fatalf("message body %s: %v", aws.ToString(msg.Body), err)
	}
}

// TestLambdaDelivery invokes with the real SDK against an HTTP server that
// speaks the Invoke API.
func TestLambdaDelivery(t *testing.T) {
	const (
		arn = "arn:aws:lambda:eu-west-1:123456789012:function:hdc-events:live"
		key = "lambda-signing-key-0123456789"
	)
	rc := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 0 {
			w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"message":"Rate exceeded","Type":"User","Reason":"ReservedFunctionConcurrentInvocationLimitExceeded"}`)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	})
	h := start(t, func(c *Config) {
		c.Guard, c.AWS, c.AWSAccounts = nil, testAWS(rc.srv.URL), []string{"123456789012"}
	})
	h.subscribe(arn, webhook.ProtocolLambda, key)
	id := h.publish("appointment.created", `{"appointment_id":"a-7"}`)[0]
	d, attempts := h.finished(id)
	if d.Status != store.DeliveryDelivered || !slices.Equal(outcomes(attempts), []string{"aws_TooManyRequestsException", "delivered"}) {
		t.Fatalf("delivery %+v, attempts %q", d, outcomes(attempts))
	}
	if attempts[0].StatusCode != http.StatusTooManyRequests {
		t.Fatalf("throttled attempt status %d", attempts[0].StatusCode)
	}

	wh, _ := standardwebhooks.NewWebhookRaw([]byte(key))
	for _, r := range rc.got() {
		if r.path != "/2015-03-31/functions/"+arn+"/invocations" || r.header.Get("X-Amz-Invocation-Type") != "Event" {
			t.Fatalf("invocation of %s, type %q", r.path, r.header.Get("X-Amz-Invocation-Type"))
		}
		// Signed (SigV4) for the function's region, not the configured one.
		if auth := r.header.Get("Authorization"); !strings.Contains(auth, "/eu-west-1/lambda/aws4_request") {
			t.Fatalf("Authorization %q is not signed for eu-west-1", auth)
		}
		var ev LambdaEvent
		if err := json.Unmarshal(r.body, &ev); err != nil {
			t.Fatalf("payload %s: %v", r.body, err)
		}
		header := http.Header{}
		for k, v := range ev.Headers {
			header.Set(k, v)
		}
		if ev.Headers["webhook-id"] != MessageID(id) {
			t.Fatalf("payload headers %v", ev.Headers)
		}
		if err := wh.Verify([]byte(ev.Body), header); err != nil {
			t.Fatalf("the payload does not verify: %v", err)
		}
		var p Payload
		if err := json.Unmarshal([]byte(ev.Body), &p); err != nil || p.Type != "appointment.created" || string(p.Data) != `{"appointment_id":"a-7"}` {
			t.Fatalf("body %s: %v", ev.Body, err)
		}
	}
}

// TestDeliveryRefusesAccountsNotAllowed: a subscription to a queue or a
// function of an AWS account the operator no longer allows (registered
// before the account was removed) is given up at its first attempt, and
// AWS is never called.
func TestDeliveryRefusesAccountsNotAllowed(t *testing.T) {
	rc := newReceiver(t, func(int, http.ResponseWriter, *http.Request) { t.Error("AWS was called") })
	h := start(t, func(c *Config) {
		c.Guard, c.AWS, c.AWSAccounts = nil, testAWS(rc.srv.URL), []string{"123456789012"}
	})
	h.subscribe("arn:aws:lambda:eu-west-1:210987654321:function:platform-admin", webhook.ProtocolLambda, "")
	h.subscribe("https://sqs.eu-west-1.amazonaws.com/210987654321/q", webhook.ProtocolSQS, "")
	for _, id := range h.publish("appointment.created", `{"appointment_id":"a-8"}`) {
		d, attempts := h.finished(id)
		if d.Status != store.DeliveryFailed || !slices.Equal(outcomes(attempts), []string{OutcomeInvalidEndpoint}) {
			t.Fatalf("%s: %+v, attempts %q", d.Subscription.Endpoint, d, outcomes(attempts))
		}
	}
}
