"""Output files that appear whole or not at all; stdout that fails."""
import contextlib
import errno
import os
import secrets
import stat
import sys


def detach_stdout():
    """Point stdout's file descriptor at /dev/null: what could not be
    written (a reader gone, a full disk) then flushes there, and the
    interpreter's own final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


@contextlib.contextmanager
def atomic_output(path):
    """Open ``path`` for binary writing through a temporary file in the same
    directory, renamed over ``path`` when the block ends without error: an
    error leaves no partial file and keeps any existing one.

    Where ``fopen(path, "w")`` would do otherwise, so does this: a symbolic
    link is written through (its target replaced, the link kept); a FIFO or a
    device (``/dev/stdout``, ``/dev/null``) is opened and written directly;
    an existing file keeps its permission bits (and owner, where allowed);
    a file with other hard links, or in a directory where no temporary file
    can be made, is overwritten in place.  Errors are OSErrors that name
    ``path``.
    """
    name = os.fsdecode(os.fspath(path))
    if not name:
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), name)
    try:
        existing = os.stat(name)
        mode = existing.st_mode
    except FileNotFoundError:
        existing = mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), name)
    # fopen(path, "w") writes a FIFO or a device (/dev/stdout) directly, and
    # truncates a file in place, which its other hard links then see
    direct = mode is not None and (not stat.S_ISREG(mode) or existing.st_nlink > 1)
    if not direct:
        target = os.path.realpath(name)       # through a symbolic link, keeping it
        directory, base = os.path.split(target)
        tmp = os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        try:
            # O_EXCL: never clobber; mode 0o666 so the umask applies as for open().
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except PermissionError:
            if mode is None:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), name) from None
            direct = True                     # a writable file in a locked directory
        except OSError as exc:
            raise type(exc)(exc.errno, exc.strerror, name) from None
    if direct:
        with open(name, "wb") as handle:
            yield handle
        return
    try:
        with open(fd, "wb") as handle:
            if existing is not None:
                # the replaced file's mode, not the umask's (a private file
                # stays private), and its owner if we may set it; inside the
                # try, so that an error or a Ctrl-C here leaves no .tmp file
                os.chmod(fd, stat.S_IMODE(existing.st_mode))
                try:
                    os.chown(fd, existing.st_uid, existing.st_gid)
                except OSError:
                    pass
            yield handle
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
