"""Runs the deltavacuum binary as a child process: secrets by environment or by a private
channel, never in argv; progress events from its standard error; an interrupt forwarded to it,
and waited for."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from typing import Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ._binary import binary_path
from .errors import VacuumInterrupted


@dataclass(frozen=True)
class Progress:
    """One progress event of a VACUUM run (the CLI's --progress json)."""

    phase: str
    listed: int
    candidates: int
    deleted: int
    deleted_bytes: int
    failed: int
    elapsed_seconds: float

    @classmethod
    def from_json(cls, d: Mapping[str, object]) -> "Progress":
        return cls(
            phase=str(d.get("phase", "")),
            listed=int(d.get("listed", 0) or 0),  # type: ignore[arg-type]
            candidates=int(d.get("candidates", 0) or 0),  # type: ignore[arg-type]
            deleted=int(d.get("deleted", 0) or 0),  # type: ignore[arg-type]
            deleted_bytes=int(d.get("deletedBytes", 0) or 0),  # type: ignore[arg-type]
            failed=int(d.get("failed", 0) or 0),  # type: ignore[arg-type]
            elapsed_seconds=float(d.get("elapsedSeconds", 0.0) or 0.0),  # type: ignore[arg-type]
        )


ProgressCallback = Callable[[Progress], None]


@dataclass
class Completed:
    args: List[str]
    returncode: int
    stdout: str
    stderr: str  # what the child printed on stderr, progress events left out


def _reader(stream, sink: List[str], on_progress: Optional[ProgressCallback]) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", "replace")
        if on_progress is not None and line.startswith('{"event":"progress"'):
            try:
                on_progress(Progress.from_json(json.loads(line)))
                continue
            except Exception:  # a callback's failure must not lose the child's output
                pass
        sink.append(line)
    stream.close()


def _interrupt(proc: subprocess.Popen) -> None:
    """Ask the child to stop as Ctrl-C would: SIGINT, or CTRL_BREAK on Windows (its own
    process group, so nothing else gets it)."""
    if sys.platform == "win32":
        proc.send_signal(signal.CTRL_BREAK_EVENT)  # type: ignore[attr-defined]
    else:
        proc.send_signal(signal.SIGINT)


def _wait(proc: subprocess.Popen) -> None:
    """proc.wait(), a short wait at a time: an interrupt delivered to another thread than the
    main one (a process-directed signal may land on any thread) leaves the main thread blocked
    in waitpid; waking every quarter second lets Python raise the KeyboardInterrupt it has
    pending, so the stop button always reaches the child."""
    while True:
        try:
            proc.wait(timeout=0.25)
            return
        except subprocess.TimeoutExpired:
            continue


#: Whether the private arguments go through an inherited pipe (--args-fd). Windows has no
#: pass_fds: there they go in the environment variable PRIVATE_ENV (--args-env), which only
#: the same user (and administrators) can read, as the secret options already do.
_PASS_FDS = sys.platform != "win32"

#: The child's environment variable that holds the private arguments where no pipe is passed.
PRIVATE_ENV = "DELTAVACUUM_PRIVATE_ARGS"


def _write_private(fd: int, data: bytes) -> None:
    """Writes the private arguments into the pipe and closes it; the child may have stopped
    reading (it refused them, or died): a broken pipe then."""
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    except (BrokenPipeError, OSError):
        pass


def run(
    args: Sequence[str],
    *,
    env: Optional[Dict[str, str]] = None,
    stdin: Optional[str] = None,
    on_progress: Optional[ProgressCallback] = None,
    private: Optional[Sequence[str]] = None,
) -> Completed:
    """Runs the binary with args (the command first). env is laid over os.environ (it carries
    the secret options the binary and the SDKs read from variables). private are arguments
    that must not be on the command line, which every user of the machine can read (ps,
    /proc/PID/cmdline): --storage-option, --conf, --inventory, --warehouse and --catalog, each
    as --NAME=VALUE, then "--" and the table. They reach the binary as a JSON array through a
    pipe it inherits (its first argument --args-fd=N), or, on Windows, through an environment
    variable (--args-env=NAME); the binary merges them in before it parses its arguments.

    A KeyboardInterrupt while it runs is forwarded to the child, which ends its run cleanly
    (recording it as failed); then VacuumInterrupted (a KeyboardInterrupt) is raised with
    what the child printed. A second interrupt while waiting kills the child."""
    argv = [binary_path()]
    child_env = dict(os.environ)
    child_env.pop(PRIVATE_ENV, None)
    if env:
        child_env.update(env)
    kw: Dict[str, object] = {}
    if sys.platform == "win32":
        kw["creationflags"] = subprocess.CREATE_NEW_PROCESS_GROUP  # type: ignore[attr-defined]
    else:
        # A session of its own: a terminal's Ctrl-C reaches only us, and we forward it once.
        kw["start_new_session"] = True
    payload: Optional[bytes] = None
    pipe: Optional[Tuple[int, int]] = None
    if private:
        payload = json.dumps(list(private)).encode("utf-8")
        if _PASS_FDS:
            pipe = os.pipe()
            argv.append(f"--args-fd={pipe[0]}")
            kw["pass_fds"] = (pipe[0],)
        else:
            argv.append(f"--args-env={PRIVATE_ENV}")
            child_env[PRIVATE_ENV] = payload.decode("utf-8")
    argv.extend(args)
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=child_env,
            **kw,  # type: ignore[arg-type]
        )
    except BaseException:
        if pipe is not None:
            os.close(pipe[0])
            os.close(pipe[1])
        raise
    out: List[str] = []
    err: List[str] = []
    threads = [
        threading.Thread(target=_reader, args=(proc.stdout, out, None), daemon=True),
        threading.Thread(target=_reader, args=(proc.stderr, err, on_progress), daemon=True),
    ]
    if pipe is not None:
        os.close(pipe[0])  # the child's end; ours is written by a thread, as a pipe holds 64 KiB
        threads.append(threading.Thread(target=_write_private, args=(pipe[1], payload), daemon=True))
    if stdin is not None:
        def feed() -> None:
            try:
                proc.stdin.write(stdin.encode("utf-8"))  # type: ignore[union-attr]
                proc.stdin.close()  # type: ignore[union-attr]
            except (BrokenPipeError, OSError):
                pass

        threads.append(threading.Thread(target=feed, daemon=True))
    for t in threads:
        t.start()
    interrupted = False
    try:
        _wait(proc)
    except KeyboardInterrupt:
        interrupted = True
        _interrupt(proc)
        try:
            _wait(proc)
        except KeyboardInterrupt:
            proc.kill()
            proc.wait()
            raise
    for t in threads:
        t.join()
    done = Completed(argv[1:], proc.returncode, "".join(out), "".join(err))
    if interrupted:
        raise VacuumInterrupted(_message(done.stderr) or "interrupted", result=done)
    return done


def _message(stderr: str) -> str:
    """The error the tool printed: from its first "deltavacuum: " line on."""
    i = stderr.find("deltavacuum: ")
    text = stderr[i + len("deltavacuum: "):] if i >= 0 else stderr
    return text.strip()


def warnings_of(stderr: str) -> List[str]:
    return [l[len("warning: "):].strip() for l in stderr.splitlines() if l.startswith("warning: ")]


message_of = _message
