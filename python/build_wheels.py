#!/usr/bin/env python3
"""Builds the deltavacuum wheels (make wheel) and the sdist.

    python/build_wheels.py                      # the five platforms and the sdist, into dist/python/
    python/build_wheels.py --platform host      # this machine's wheel only (CI, make test-python)
    python/build_wheels.py --dist dist          # take the binaries `make dist` built instead
    python/build_wheels.py --platform host --binary bin/deltavacuum   # the binary of make build

Each binary is cross-compiled with CGO_ENABLED=0 go build -trimpath -ldflags "-s -w", the flags of
the release build; with --dist the binaries of that build are packed as they are. The version is
the commit's, as make build and make dist name it (go run ./internal/tools/version), in PEP 440.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_build"))
import dvbuild  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--platform", action="append", default=None,
                    help="all (default), host, or one of: " + ", ".join(dvbuild.PLATFORMS) + " (repeatable)")
    ap.add_argument("--out", default=str(dvbuild.HERE.parent / "dist" / "python"), help="output folder")
    ap.add_argument("--dist", default=None, help="folder of the binaries `make dist` built (not built again)")
    ap.add_argument("--binary", default=None,
                    help="this machine's binary, already built (make build builds it with the release flags): packed as it is")
    ap.add_argument("--no-sdist", action="store_true", help="skip the source distribution")
    a = ap.parse_args()
    plats = []
    for p in a.platform or ["all"]:
        if p == "all":
            plats += list(dvbuild.PLATFORMS)
        elif p == "host":
            plats.append(dvbuild.host_platform())
        elif p in dvbuild.PLATFORMS:
            plats.append(p)
        else:
            ap.error(f"unknown platform {p!r}; one of: all, host, {', '.join(dvbuild.PLATFORMS)}")
    if a.binary and (a.dist or [p for p in dict.fromkeys(plats)] != [dvbuild.host_platform()]):
        ap.error("--binary is this machine's binary: give it with --platform host only, without --dist")
    version, git_version = dvbuild.version_info()
    out = Path(a.out)
    print(f"deltavacuum {version} (git {git_version}) -> {out}", file=sys.stderr)
    with tempfile.TemporaryDirectory() as tmp:
        for plat in dict.fromkeys(plats):
            if a.binary:
                binary = Path(a.binary)
            elif a.dist:
                binary = dvbuild.find_dist_binary(Path(a.dist), plat)
            else:
                print(f"go build {plat}", file=sys.stderr)
                binary = dvbuild.go_build(plat, Path(tmp), git_version)
            print(dvbuild.write_wheel(out, plat, binary, version, git_version))
    if not a.no_sdist:
        print(dvbuild.write_sdist(out, version, git_version))
    return 0


if __name__ == "__main__":
    sys.exit(main())
