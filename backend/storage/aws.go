package storage

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// defaultAWSRegion signs requests to an S3- or SQS-compatible service (an
// emulator) when the AWS configuration names no region; deliveries to AWS
// itself take the region from the queue URL or function ARN.
const defaultAWSRegion = "us-east-1"

// LoadAWS loads the standard AWS configuration (environment, shared
// files, instance role), once for a server: the blob store and the
// webhook deliveries share it.
func LoadAWS(ctx context.Context) (aws.Config, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = defaultAWSRegion
	}
	return cfg, nil
}
