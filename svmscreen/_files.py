"""Output files that appear whole or not at all."""
import contextlib
import os
import secrets
from pathlib import Path


@contextlib.contextmanager
def atomic_output(path):
    """Open ``path`` for binary writing through a temporary file in the same
    directory, renamed over ``path`` when the block ends without error: an
    error leaves no partial file and keeps any existing one."""
    path = Path(os.fsdecode(os.fspath(path)))
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # O_EXCL: never clobber; mode 0o666 so the umask applies as for open().
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with open(fd, "wb") as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
