package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"io"

	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// contentMD5 sets Content-MD5 on a request with a body, just before it is signed. S3 requires
// an integrity header on DeleteObjects; the SDK sends a CRC32 checksum header, which AWS takes,
// but S3-compatible stores that predate it (OCI, KS3, older MinIO and others) answer 400
// InvalidRequest "Missing required header for this request: Content-MD5". Both headers are
// sent; stores that know the newer one check both.
type contentMD5 struct{}

func (contentMD5) ID() string { return "deltavacuum.ContentMD5" }

func (contentMD5) HandleFinalize(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	req, ok := in.Request.(*smithyhttp.Request)
	if !ok || req.Header.Get("Content-MD5") != "" {
		return next.HandleFinalize(ctx, in)
	}
	if stream := req.GetStream(); stream != nil {
		body, err := io.ReadAll(stream)
		if err != nil {
			return middleware.FinalizeOutput{}, middleware.Metadata{}, fmt.Errorf("reading the request body for its Content-MD5: %w", err)
		}
		sum := md5.Sum(body)
		req.Header.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
		if req, err = req.SetStream(bytes.NewReader(body)); err != nil {
			return middleware.FinalizeOutput{}, middleware.Metadata{}, err
		}
		in.Request = req
	}
	return next.HandleFinalize(ctx, in)
}

// withContentMD5 adds contentMD5 to an operation's stack, before signing (and after the
// retry middleware, so that every attempt carries it).
func withContentMD5(stack *middleware.Stack) error {
	return stack.Finalize.Insert(contentMD5{}, "Signing", middleware.Before)
}
