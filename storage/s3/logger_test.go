package s3

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/smithy-go/logging"
)

// The SDK's warnings go to log/slog at info level, not to standard error.
func TestSDKLoggerGoesToSlog(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})))
	sdkLogger{}.Logf(logging.Warn, "falling back to IMDSv1: %s", "x")
	if buf.Len() != 0 {
		t.Errorf("an SDK warning shows at the default level: %s", buf.String())
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	sdkLogger{}.Logf(logging.Warn, "falling back to IMDSv1: %s", "x")
	if !strings.Contains(buf.String(), "aws sdk: falling back to IMDSv1: x") || !strings.Contains(buf.String(), "level=INFO") {
		t.Errorf("an SDK warning is not logged at info: %q", buf.String())
	}
}
