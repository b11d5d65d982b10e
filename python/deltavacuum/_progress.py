"""Progress of a VACUUM run in a notebook: a tqdm bar when tqdm is installed."""

from __future__ import annotations

from typing import Any, Callable, Optional, Tuple

from ._run import Progress, ProgressCallback


def _noop() -> None:
    pass


def progress_callback(progress: Any, desc: str) -> Tuple[Optional[ProgressCallback], Callable[[], None]]:
    """The callback for progress (None: a bar if tqdm is importable; False: none; True: a bar;
    a function: called with each Progress) and the function that closes the display."""
    if progress is False:
        return None, _noop
    if callable(progress) and not isinstance(progress, bool):
        return progress, _noop
    try:
        from tqdm.auto import tqdm
    except ImportError:
        if progress is True:
            raise ImportError("progress=True needs tqdm: pip install tqdm") from None
        return None, _noop
    bar: Any = None

    def update(p: Progress) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=None, desc=desc, unit="file", leave=True)
            # The bar starts at the first event, when the run has listed for a while already:
            # its clock starts when the run did, or its first rate is the files listed so far
            # over a few microseconds (billions of files per second).
            bar.start_t = bar.last_print_t = bar._time() - max(p.elapsed_seconds, 0.0)
        if p.phase == "deleting" or p.deleted:
            bar.total = p.candidates or None
            bar.n = p.deleted
        else:
            bar.n = p.listed
        bar.set_postfix_str(f"{p.phase}: listed {p.listed}, candidates {p.candidates}, deleted {p.deleted}", refresh=False)
        bar.refresh()

    def close() -> None:
        if bar is not None:
            bar.close()

    return update, close
