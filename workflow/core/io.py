"""Atomic, safe file I/O: a killed job never leaves a half-written output behind.

The one atomic writer of the project (steps, stamps, the import cache). numpy is imported where arrays are
handled, not here: the Snakefile process writes stamps through this module at every start.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import socket
import tempfile
from pathlib import Path

UMASK = os.umask(0)
os.umask(UMASK)
# A temporary file's name says who writes it (.<name>.<random>.<host>-pid<pid>.tmp<suffix>), so that a run cleaning
# up after a killed one (workflow/core/housekeeping.py) removes only files whose writer is gone.
WRITER = re.compile(r"\.(?P<host>[A-Za-z0-9-]+)-pid(?P<pid>[0-9]+)\.tmp[^/]*$")


def this_host() -> str:
    """The node name, reduced to what the temporary name's pattern keeps intact."""
    return re.sub(r"[^A-Za-z0-9-]", "-", socket.gethostname()) or "host"


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path beside `path`; rename it onto `path` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = f".{this_host()}-pid{os.getpid()}.tmp"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=writer + path.suffix, dir=path.parent)
    os.close(fd)
    os.chmod(tmp, 0o666 & ~UMASK)  # mkstemp makes 0600 files; outputs get the usual permissions
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _jsonable(obj):
    import numpy as np

    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


def write_json(path, obj) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_jsonable) + "\n")


def read_json(path):
    with open(path) as fh:
        return json.load(fh)


def write_npz(path, **arrays) -> None:
    import numpy as np

    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.savez_compressed(fh, **arrays)


def read_npz(path) -> dict:
    import numpy as np

    with np.load(path, allow_pickle=False) as z:  # never unpickle objects from data files
        return {k: z[k] for k in z.files}


def write_text(path, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text)


def save_figure(fig, path, dpi: int = 120) -> None:
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=dpi, bbox_inches="tight", format=Path(path).suffix.lstrip("."))


def save_state(path, state_dict: dict, meta: dict) -> None:
    """A torch checkpoint holding only tensors and plain metadata (loadable with weights_only=True)."""
    import torch

    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        # through a file object: torch names the archive's records after a path it is given (here a random
        # temporary name), which made two identical checkpoints differ byte for byte
        torch.save({"state_dict": state_dict, "meta": meta}, fh)


def load_state(path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=True)  # no arbitrary unpickling


def sha256(path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            h.update(block)
    return h.hexdigest()
