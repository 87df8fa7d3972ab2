"""`offline_cache_fallback=False` in a program: a cache folder that refuses a write is an error naming the folder
and the cause (README, Caching), not a silent `write_failures` count in `qd.stats()`; a cache path with a file in
the way names that file. With the fallback on, the
same folder sends new kernels to a private folder with a warning and the call runs."""

from __future__ import annotations

import numpy as np
import pytest

import quadrants as qd
from tests.conftest import qd_init


def _blocked(tmp_path) -> str:
    """A cache path with a file in the way: refused for every user, root included (chmod is not)."""
    (tmp_path / "blocker").write_text("not a folder")
    return str(tmp_path / "blocker" / "cache")


@pytest.mark.parametrize("fastcache", [False, True])
def test_a_refused_write_is_an_error_naming_the_folder_and_the_cause(tmp_path, fastcache: bool) -> None:
    cache = _blocked(tmp_path)
    qd_init(offline_cache=True, offline_cache_file_path=cache, offline_cache_fallback=False)

    @qd.kernel(fastcache=fastcache)
    def double(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] *= 2

    with pytest.raises(qd.QuadrantsCacheWriteError) as e:
        double(np.ones(4, np.float32))
    text = str(e.value)
    assert "the cache folder refused to store kernel" in text and "double" in text
    assert cache in text and "offline_cache_fallback=False" in text
    assert f"{tmp_path / 'blocker'} is a file, not a folder" in text  # which path is in the way, not ENOTDIR


def test_with_the_fallback_the_same_folder_warns_and_the_call_runs(tmp_path, monkeypatch, caplog) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    qd_init(offline_cache=True, offline_cache_file_path=_blocked(tmp_path))

    @qd.kernel
    def triple(x: qd.types.NDArray[qd.f32, 1]):
        for i in range(x.shape[0]):
            x[i] *= 3

    x = np.ones(4, np.float32)
    triple(x)
    assert (x == 3).all()
    assert "is not writable" in caplog.text and "new kernels are cached in" in caplog.text
    # QD_CACHE_DIR naming a file (or a path below one) says so, and the bookkeeping files are missing, not damaged
    assert f"{tmp_path / 'blocker'} is a file, not a folder" in caplog.text and "damaged" not in caplog.text
