package s3

import (
	"strings"

	"github.com/deltavacuum/deltavacuum/storage/location"
)

// Importing this package registers the s3:// and s3a:// locations with package location.
func init() { location.RegisterConfig("s3", configFor, New) }

// configFor is the Config of an s3:// or s3a:// location and its storage options.
func configFor(l location.Parsed, o location.Options) (Config, error) {
	u := l.URL
	bucket, err := l.Bucket()
	if err != nil {
		return Config{}, err
	}
	c := Config{
		Bucket:          bucket,
		Prefix:          strings.Trim(u.Path, "/"),
		Region:          o["aws_region"],
		Endpoint:        o["aws_endpoint"],
		AllowHTTP:       o.Bool("aws_allow_http"),
		AccessKeyID:     o["aws_access_key_id"],
		SecretAccessKey: o["aws_secret_access_key"],
		SessionToken:    o["aws_session_token"],
		Profile:         o["aws_profile"],
		SkipSignature:   o.Bool("aws_skip_signature"),
		Concurrency:     l.Common.Concurrency, BatchSize: l.Common.BatchSize, MaxAttempts: l.Common.MaxAttempts, ListPageSize: l.Common.ListPageSize,
		WrapTransport: l.Common.WrapTransport,
		Location:      location.SafeURL(u),
	}
	c.PathStyle = c.Endpoint != ""
	if _, ok := o["aws_virtual_hosted_style_request"]; ok {
		c.PathStyle = !o.Bool("aws_virtual_hosted_style_request")
	}
	if _, ok := o["aws_s3_path_style"]; ok {
		c.PathStyle = o.Bool("aws_s3_path_style")
	}
	return c, nil
}
