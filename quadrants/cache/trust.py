"""Who may have written a cache entry: the trust check run before anything read from the cache is used.

A cache holds native code that this process maps and runs, so a cache is trusted code, like a Python
`site-packages` folder. An entry is used only when nobody but this user (or root) could have written it or
replaced it: the file is owned by this user or root and no one else can write it, and the same holds for every
folder from the file's up to the cache root (as OpenSSH's StrictModes checks a user's key files). Otherwise the
entry is ignored with one warning per folder or reason, and the kernel compiles.

Write access by a group counts as someone else's unless the group is this user's private group (their primary
group, with no other members): the common `umask 002` setups stay trusted. A world-writable folder is accepted
only with the sticky bit (as `/tmp`), where others cannot rename or delete what this user created; the entries
inside it must still pass. Nothing here imports more than `os` and `stat` (it runs on every cache read).
"""

from __future__ import annotations

import os
import stat

_DIRS: dict[str, str | None] = {}  # folder -> why it is not trusted (None: trusted), per process
_GROUPS: dict[int, bool] = {}  # gid -> whether it is this user's private group


def _owners() -> tuple[int, ...]:
    uid = os.geteuid() if hasattr(os, "geteuid") else 0
    return (uid, 0)


def _private_group(gid: int) -> bool:
    known = _GROUPS.get(gid)
    if known is None:
        known = False
        if hasattr(os, "getegid") and gid == os.getegid():
            try:
                import grp
                import pwd

                members = grp.getgrgid(gid).gr_mem
                me = pwd.getpwuid(os.geteuid()).pw_name
                known = all(m == me for m in members)
            except (ImportError, KeyError):
                known = False
        _GROUPS[gid] = known
    return known


def problem(st: os.stat_result, what: str = "file") -> str | None:
    """Why a file or folder with this `stat` could have been written by someone else, or None."""
    if not hasattr(os, "geteuid"):
        return None  # no POSIX owners (Windows): nothing to check
    if st.st_uid not in _owners():
        return f"the {what} is owned by uid {st.st_uid}, not by this user or root"
    mode = st.st_mode
    if mode & stat.S_IWOTH and not (what == "folder" and mode & stat.S_ISVTX):
        return f"the {what} is writable by everyone"
    if mode & stat.S_IWGRP and not _private_group(st.st_gid):
        return f"the {what} is writable by group {st.st_gid}"
    return None


def folder_problem(path: str, root: str) -> str | None:
    """Why a folder between `path` (a folder) and the cache `root` (included) is not trusted, or None."""
    root = os.path.abspath(root)
    cur = os.path.abspath(path)
    while True:
        why = _folder(cur)
        if why is not None:
            return why
        if cur == root or os.path.dirname(cur) == cur or not cur.startswith(root):
            return None
        cur = os.path.dirname(cur)


def _folder(path: str) -> str | None:
    if path in _DIRS:
        return _DIRS[path]
    try:
        st = os.stat(path)  # a symlinked cache root is followed: its target is what is checked
        why = None if stat.S_ISDIR(st.st_mode) else "it is not a folder"
        why = why or problem(st, "folder")
    except OSError as e:
        why = f"it cannot be checked ({e.strerror})"
    why = f"{path}: {why}" if why else None
    _DIRS[path] = why
    return why


def forget() -> None:
    """Drop what was learnt about folders (tests change permissions within one process)."""
    _DIRS.clear()
    _GROUPS.clear()


def private_folder(path: str) -> str | None:
    """Why `path` is not a folder private to this user (a real folder, not a symlink, owned by this user, no
    access for anyone else), or None. For the fallback folder in the shared temp directory."""
    try:
        st = os.lstat(path)
    except OSError as e:
        return f"{path}: {e.strerror}"
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        return f"{path} is not a folder (a symlink or a file)"
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        return f"{path} is owned by uid {st.st_uid}, not by this user"
    if st.st_mode & 0o077:
        return f"{path} is accessible to others (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def umask() -> int:
    """This process's umask, read without changing it (new cache files honour it)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    old = os.umask(0o022)
    os.umask(old)
    return old
