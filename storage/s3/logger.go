package s3

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/aws/smithy-go/logging"
)

// sdkLogger sends what the AWS SDK logs (its warnings, such as an EC2 IMDS fallback or a
// response without a checksum it can check) to log/slog, warnings at info level and the rest
// at debug, instead of the SDK's default, standard error: they are diagnostics, shown with
// deltavacuum -v, never mixed into a command's output.
type sdkLogger struct{}

func (sdkLogger) Logf(c logging.Classification, format string, v ...any) {
	level := slog.LevelDebug
	if c == logging.Warn {
		level = slog.LevelInfo
	}
	slog.Log(context.Background(), level, "aws sdk: "+fmt.Sprintf(format, v...), "classification", string(c))
}
