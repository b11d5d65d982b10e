package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// childStats is what a child process cost.
type childStats struct {
	Wall     time.Duration
	MaxRSSKB int64
	User     time.Duration
	Sys      time.Duration
}

// runChild runs name with args in dir (stdin empty, stderr to ours), with stdout to out, and
// returns its wall time and rusage. Peak RSS is ru_maxrss of the child, which for a child
// that waits for its own children (xargs, a shell) is the largest of them.
func runChild(ctx context.Context, dir string, out io.Writer, name string, args ...string) (childStats, error) {
	return runChildEnv(ctx, dir, nil, out, name, args...)
}

// runChildEnv is runChild with env (KEY=VALUE) added to the child's environment.
func runChildEnv(ctx context.Context, dir string, env []string, out io.Writer, name string, args ...string) (childStats, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout = out
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	st := childStats{Wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
			st.MaxRSSKB = ru.Maxrss
			st.User = time.Duration(ru.Utime.Nano())
			st.Sys = time.Duration(ru.Stime.Nano())
		}
	}
	if err != nil {
		tail := stderr.Bytes()
		if len(tail) > 2000 {
			tail = tail[len(tail)-2000:]
		}
		return st, fmt.Errorf("%s: %w\n%s", name, err, tail)
	}
	return st, nil
}

func cmdMeasure(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return usageError{"measure: -- COMMAND ARGS..."}
	}
	st, err := runChild(ctx, "", os.Stdout, args[0], args[1:]...)
	out := map[string]any{
		"command": args, "wallSeconds": st.Wall.Seconds(), "maxRSSMiB": float64(st.MaxRSSKB) / 1024,
		"userSeconds": st.User.Seconds(), "sysSeconds": st.Sys.Seconds(),
	}
	if err != nil {
		out["error"] = err.Error()
	}
	b, _ := json.Marshal(out)
	fmt.Fprintln(os.Stderr, string(b))
	return err
}
