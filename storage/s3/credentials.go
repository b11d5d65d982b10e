package s3

import (
	"context"
	"errors"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/deltavacuum/deltavacuum/storage/internal/blobstore"
)

// CredentialError is the AWS SDK's failure to find credentials, told in one paragraph: for
// which table, where the SDK's default chain looked, and which storage options or environment
// variables give credentials (as storage/azure's CredentialError does for Microsoft Entra).
// The SDK's own message ("failed to refresh cached credentials, no EC2 IMDS role found, …")
// is logged at debug level (deltavacuum -v) and stays reachable with errors.As and
// errors.Unwrap; it is never the message.
type CredentialError struct {
	// Location is the table, or the bucket and prefix of the store.
	Location string
	// Profile is the shared config profile asked for (aws_profile), "" for the default chain.
	Profile string
	Err     error
}

func (e *CredentialError) Error() string {
	msg := "no AWS credentials for " + e.Location + ": "
	if e.Profile != "" {
		msg += "profile " + e.Profile + " (aws_profile) gave none. "
	} else {
		msg += "the AWS SDK's default chain found none (it looks at AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY, " +
			"AWS_PROFILE in the shared files ~/.aws/credentials and ~/.aws/config or AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE, " +
			"AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, the container role of ECS or EKS, and the EC2 instance role). "
	}
	return msg + "Give --storage-option aws_access_key_id and aws_secret_access_key (and aws_session_token for temporary " +
		"credentials), or aws_profile with a profile of the shared files (after aws configure or aws sso login); or set " +
		"AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE. A public bucket needs none: --storage-option " +
		"aws_skip_signature=true sends unsigned requests."
}

func (e *CredentialError) Unwrap() error { return e.Err }

// explainedCredentials is a credentials provider whose failures are CredentialErrors.
type explainedCredentials struct {
	base     aws.CredentialsProvider
	location string
	profile  string
}

func (c explainedCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	creds, err := c.base.Retrieve(ctx)
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return creds, err
	}
	slog.Debug("aws sdk: no credentials", "location", c.location, "error", blobstore.SafeError(err).Error())
	return creds, &CredentialError{Location: c.location, Profile: c.profile, Err: err}
}

// safeError is blobstore.SafeError, except that a CredentialError anywhere in err is the
// error: the paragraph, without the SDK's "operation error S3: ListObjectsV2, get identity:
// get credentials:" before it.
func safeError(err error) error {
	var ce *CredentialError
	if errors.As(err, &ce) {
		return ce
	}
	return blobstore.SafeError(err)
}
