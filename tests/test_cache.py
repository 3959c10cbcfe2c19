"""The persistent compile cache (gthinker/compiler/cache.py).

The cache lives across processes, so most tests run a small user script in fresh
Python subprocesses (GTHINKER_CACHE_DIR under tmp_path) and read back the count
it found and the seconds it spent compiling (0 on a cache hit).
"""

import hashlib
import io
import json
import os
import pickle
import shlex
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
from numba import njit
from numba.core.errors import TypingError

from gthinker.compiler import cache
from gthinker.compiler import files as cache_files

# ---- the user's code, as files ------------------------------------------------

USER_SCRIPT = textwrap.dedent('''\
    import json

    import networkx as nx
    import numpy as np

    import gthinker

    import helper

    MULT = 1


    class Tri(gthinker.Task):
        counters = ("triangles",)

        @staticmethod
        def compute(ctx, record):
            v = record[0]
            nv = ctx.neighbors(v)
            c = 0
            for u in nv:
                if u <= v:
                    continue
                nu = ctx.neighbors(u)
                for w in nv:
                    if w > u:
                        j = np.searchsorted(nu, w)
                        if j < nu.size and nu[j] == w:
                            c += 1
            ctx.count(0, helper.weight(c) * MULT)


    G = nx.gnm_random_graph(60, 300, seed=1)
    res = gthinker.run(Tri, gthinker.Graph.from_networkx(G), threads=2)
    print(json.dumps({"count": int(res.counters["triangles"]),
                      "compile_seconds": res.compile_seconds}))
''')

HELPER_MODULE = textwrap.dedent('''\
    from numba import njit


    @njit
    def _scale(c):
        return c * 1


    @njit
    def weight(c):
        return _scale(c)
''')

G = nx.gnm_random_graph(60, 300, seed=1)
TRIANGLES = sum(nx.triangles(G).values()) // 3
ANNOUNCE = "gthinker: compiling Tri"


def _write_user_files(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "user.py").write_text(USER_SCRIPT)
    (folder / "helper.py").write_text(HELPER_MODULE)


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, (old, text)
    path.write_text(text.replace(old, new))


def _start(workdir: Path, cache_dir, prefix=(), preamble="", **env_extra) -> subprocess.Popen:
    env = dict(os.environ)
    env.update(
        GTHINKER_CACHE_DIR=str(cache_dir),
        # Edits within one second that keep the file size would otherwise be
        # hidden by a stale __pycache__ entry: that is Python's cache, not ours.
        PYTHONDONTWRITEBYTECODE="1",
        XDG_CACHE_HOME=str(workdir / "xdg"),
    )
    env.update(env_extra)
    script = ["-c", f"{preamble}\nexec(open('user.py').read())"] if preamble else ["user.py"]
    return subprocess.Popen([*prefix, sys.executable, *script], cwd=workdir, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _finish(proc: subprocess.Popen) -> tuple[dict, str]:
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}\n{stderr}"
    return json.loads(stdout.strip().splitlines()[-1]), stderr


def _run(workdir: Path, cache_dir, **kwargs) -> tuple[dict, str]:
    return _finish(_start(workdir, cache_dir, **kwargs))


def _entries(cache_dir: Path) -> list[Path]:
    """The user's entries (the framework's own, gthinker.graphs.graph.* etc., aside)."""
    return sorted(p for p in cache_dir.glob("cpu/*.gtc") if not p.name.startswith("gthinker."))


def _warning_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if "CacheWarning" in ln]


# ---- one filled cache, shared ----------------------------------------------------


@pytest.fixture(scope="module")
def filled(tmp_path_factory):
    """A first run (miss) on an empty cache folder, then a second (hit)."""
    root = tmp_path_factory.mktemp("filled")
    _write_user_files(root)
    cache_dir = root / "cache"
    miss = _run(root, cache_dir)
    files_after_miss = _entries(cache_dir)
    hit = _run(root, cache_dir)
    return {"root": root, "cache": cache_dir, "miss": miss, "hit": hit,
            "files_after_miss": files_after_miss}


def _copy_of(filled, tmp_path: Path) -> Path:
    _write_user_files(tmp_path)
    shutil.copytree(filled["cache"], tmp_path / "cache")
    return tmp_path / "cache"


def test_miss_then_hit(filled):
    (out1, err1), (out2, err2) = filled["miss"], filled["hit"]
    assert out1["count"] == TRIANGLES
    assert out1["compile_seconds"] > 0
    assert len(filled["files_after_miss"]) == 1
    assert filled["files_after_miss"][0].name.startswith("Tri-")
    assert out2["count"] == TRIANGLES
    assert out2["compile_seconds"] == 0
    assert _entries(filled["cache"]) == filled["files_after_miss"]  # nothing new written
    assert not _warning_lines(err1) and not _warning_lines(err2)


def test_long_compile_is_announced_once_and_a_hit_is_silent(filled):
    (out1, err1), (_, err2) = filled["miss"], filled["hit"]
    announced = err1.count(ANNOUNCE)
    # The stopwatch that times the compile also fires the announcement.
    if out1["compile_seconds"] > cache.ANNOUNCE_AFTER + 0.25:
        assert announced == 1, err1
    elif out1["compile_seconds"] < cache.ANNOUNCE_AFTER - 0.25:
        assert announced == 0, err1
    else:
        assert announced <= 1, err1
    assert ANNOUNCE not in err2


def test_edits_invalidate_and_new_entries_hit(filled, tmp_path):
    cache_dir = _copy_of(filled, tmp_path)
    user, helper = tmp_path / "user.py", tmp_path / "helper.py"
    steps = [
        ("compute body", user, "c += 1", "c += 2", 2),
        ("global constant", user, "MULT = 1", "MULT = 3", 3),
        ("njit helper in another module", helper, "return c * 1", "return c * 5", 5),
    ]
    factor = 1
    for what, path, old, new, times in steps:
        _edit(path, old, new)
        factor *= times
        out, _ = _run(tmp_path, cache_dir)
        assert out["count"] == factor * TRIANGLES, f"after editing the {what}"
        assert out["compile_seconds"] > 0, f"after editing the {what}"
        out, _ = _run(tmp_path, cache_dir)
        assert out == {"count": factor * TRIANGLES, "compile_seconds": 0}, \
            f"second run after editing the {what}"
    assert len(_entries(cache_dir)) == 1 + len(steps)
    # Back to the original code: its entry is still there.
    _write_user_files(tmp_path)
    out, _ = _run(tmp_path, cache_dir)
    assert out == {"count": TRIANGLES, "compile_seconds": 0}


def test_concurrent_fills(tmp_path):
    _write_user_files(tmp_path)
    cache_dir = tmp_path / "cache"
    procs = [_start(tmp_path, cache_dir) for _ in range(3)]
    results = [_finish(p) for p in procs]
    for out, err in results:
        assert out["count"] == TRIANGLES
        assert not _warning_lines(err), err
    # One compiles; the others wait for it and load its code (compile locks).
    assert sorted(out["compile_seconds"] > 0 for out, _ in results) == [False, False, True]
    assert len(_entries(cache_dir)) == 1
    assert not list(cache_dir.rglob(".tmp-*"))
    out, _ = _run(tmp_path, cache_dir)
    assert out == {"count": TRIANGLES, "compile_seconds": 0}


class _Anything:
    def __new__(cls, *args, **kwargs):
        return object.__new__(cls)

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        pass


class _KeyOnly(pickle.Unpickler):
    """Reads an entry's key without rebuilding its compiled code (which would
    import the user's modules here)."""

    def find_class(self, module, name):
        return _Anything


_HEADER = 4 + 2 + 32  # "GTC\0", the format, the body's SHA-256 (gthinker/cache_files.py)


def _flip_code_bytes(data: bytes) -> bytes:
    """256 bytes flipped inside the entry's machine code: the pickle still loads (the
    entry that crashed every later run in an LLVM assertion before entries had a
    checksum)."""
    at = data.index(b"\x7fELF") + 2000
    assert at + 256 < len(data)
    flipped = bytes(b ^ 0x5A for b in data[at:at + 256])
    return data[:at] + flipped + data[at + 256:]


def _other_format(data: bytes) -> bytes:
    return data[:4] + (cache.FORMAT - 1).to_bytes(2, "little") + data[6:]


def _bad_payload(data: bytes) -> bytes:
    key, _, _ = _KeyOnly(io.BytesIO(data[_HEADER:])).load()
    assert isinstance(key, str)
    # The right key and a good checksum: the entry is read, then its code fails to load.
    return cache_files.pack(key, ("not", "compiled", "code"))


@pytest.mark.parametrize("damage, message", [
    (_flip_code_bytes, "is damaged (its checksum does not match"),
    (lambda data: data[: len(data) // 2], "is damaged"),
    (lambda data: b"", "is empty"),
    (lambda data: bytes(range(256)) * 16, "is not a gthinker cache entry"),
    (_other_format, f"is of format {cache.FORMAT - 1}, not {cache.FORMAT}"),
    (_bad_payload, "cannot be loaded"),
], ids=["flipped-code", "truncated", "empty", "garbage", "other-format", "bad-payload"])
def test_damaged_entry_is_deleted_and_compiled_again(filled, tmp_path, damage, message):
    cache_dir = _copy_of(filled, tmp_path)
    (entry,) = _entries(cache_dir)
    entry.write_bytes(damage(entry.read_bytes()))
    out, err = _run(tmp_path, cache_dir)
    assert out["count"] == TRIANGLES
    assert out["compile_seconds"] > 0
    warnings = _warning_lines(err)
    assert len(warnings) == 1, err
    assert message in warnings[0] and entry.name in warnings[0] and "deleted" in warnings[0]
    assert "first run only" not in err  # if the compile was announced, it says why
    # The new compile replaced the damaged entry with a good one.
    assert _entries(cache_dir) == [entry]
    data = entry.read_bytes()
    assert hashlib.sha256(data[_HEADER:]).digest() == data[6:_HEADER]
    assert _KeyOnly(io.BytesIO(data[_HEADER:])).load()[1] is not None  # code, not a marker


def test_replaced_entry_loads(filled, tmp_path):
    cache_dir = _copy_of(filled, tmp_path)
    (entry,) = _entries(cache_dir)
    entry.write_bytes(_flip_code_bytes(entry.read_bytes()))
    _run(tmp_path, cache_dir)
    out, err = _run(tmp_path, cache_dir)
    assert out == {"count": TRIANGLES, "compile_seconds": 0}
    assert not _warning_lines(err), err


@pytest.fixture(scope="module")
def unwritable(tmp_path_factory):
    """A run whose cache folder would lie under a regular file (chmod does not
    stop root, so this is the unwritable folder that also holds for root), then a
    second run."""
    root = tmp_path_factory.mktemp("unwritable")
    _write_user_files(root)
    (root / "afile").write_text("not a folder")
    return root, *_run(root, root / "afile" / "cache")


def test_unwritable_folder_falls_back_to_the_user_folder(unwritable):
    root, out, err = unwritable
    assert out["count"] == TRIANGLES and out["compile_seconds"] > 0
    assert (root / "afile").read_text() == "not a folder"
    assert not _warning_lines(err), err
    said = [ln for ln in err.splitlines() if "cannot be written" in ln]
    assert said == [f"gthinker: the compile cache {root / 'afile' / 'cache'} cannot be written "
                    f"(Not a directory); compiled code is kept in {root / 'xdg' / 'gthinker'} "
                    f"instead"], err
    assert len(_entries(root / "xdg" / "gthinker")) == 1


def _read_only(folder: Path):
    """A command prefix under which ``folder`` is read-only, even for root: a
    read-only bind mount in a user namespace (root), or chmod (other users).
    Skips the test where neither works."""
    if os.geteuid() != 0:
        for p in [folder, *folder.rglob("*")]:
            p.chmod(p.stat().st_mode & ~0o222)
        return []
    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "-r", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("root without user namespaces: no way to make a folder read-only")
    d = shlex.quote(str(folder))
    return ["unshare", "-r", "-m", "sh", "-c",
            f'mount --bind {d} {d} && mount -o remount,ro,bind {d} {d} && exec "$@"', "sh"]


def test_read_only_folder_is_read_and_new_code_goes_to_the_user_folder(filled, tmp_path):
    cache_dir = _copy_of(filled, tmp_path)
    prefix = _read_only(cache_dir)
    out, err = _run(tmp_path, cache_dir, prefix=prefix)  # all there: a hit
    assert out == {"count": TRIANGLES, "compile_seconds": 0}
    assert "gthinker:" not in err, err
    _edit(tmp_path / "user.py", "MULT = 1", "MULT = 2")  # new code: compiled, kept elsewhere
    out, err = _run(tmp_path, cache_dir, prefix=prefix)
    assert out["count"] == 2 * TRIANGLES and out["compile_seconds"] > 0
    said = [ln for ln in err.splitlines() if "cannot be written" in ln]
    assert len(said) == 1 and str(tmp_path / "xdg" / "gthinker") in said[0], err
    assert not _warning_lines(err), err
    assert len(_entries(tmp_path / "xdg" / "gthinker")) == 1
    out, err = _run(tmp_path, cache_dir, prefix=prefix)  # from the fallback
    assert out == {"count": 2 * TRIANGLES, "compile_seconds": 0}
    # No folder can be written (the fallbacks blocked too): the run still counts right,
    # with one warning, and does not promise a first run only.
    _edit(tmp_path / "user.py", "MULT = 2", "MULT = 3")
    (tmp_path / "afile").write_text("not a folder")
    blocked = tmp_path / "afile"
    out, err = _run(tmp_path, cache_dir, prefix=prefix, XDG_CACHE_HOME=str(blocked / "xdg"),
                    preamble=f"import tempfile; tempfile.tempdir = {str(blocked / 'tmp')!r}")
    assert out["count"] == 3 * TRIANGLES and out["compile_seconds"] > 0
    warnings = _warning_lines(err)
    assert len(warnings) == 1 and "cannot write the compile cache" in warnings[0], err
    assert "first run only" not in err


def test_a_named_folder_is_the_only_one_read(filled, tmp_path):
    # Entries in the user cache folder (the default) are not read when GTHINKER_CACHE_DIR
    # names another, writable folder: naming a new folder gives an empty cache.
    default = _copy_of(filled, tmp_path)
    (tmp_path / "xdg").mkdir()
    default.rename(tmp_path / "xdg" / "gthinker")
    before = sorted(p.name for p in (tmp_path / "xdg" / "gthinker").rglob("*"))
    out, err = _run(tmp_path, tmp_path / "new")
    assert out["count"] == TRIANGLES and out["compile_seconds"] > 0
    assert len(_entries(tmp_path / "new")) == 1
    assert sorted(p.name for p in (tmp_path / "xdg" / "gthinker").rglob("*")) == before
    out, err = _run(tmp_path, tmp_path / "new")  # and it is the one read
    assert out == {"count": TRIANGLES, "compile_seconds": 0}


def test_code_built_for_a_portable_level_loads_from_the_package(tmp_path):
    # What `gthinker warmup --portable x86-64-v2` builds into the package's folder
    # (here a copy of it, named by the preamble) loads into a process with an empty cache
    # folder on this machine; an edited task is compiled again, never served stale.
    if "x86-64-v2" not in cache.host_levels():
        pytest.skip("this machine does not run x86-64-v2 code")
    _write_user_files(tmp_path)
    shipped = tmp_path / "prebuilt"
    out, _ = _run(tmp_path, shipped, NUMBA_CPU_NAME="x86-64-v2", NUMBA_CPU_FEATURES="")
    assert out["count"] == TRIANGLES and out["compile_seconds"] > 0
    assert len(_entries(shipped)) == 1
    use = f"import gthinker.compiler.cache as c; c.PREBUILT = c.Path({str(shipped)!r})"
    out, err = _run(tmp_path, tmp_path / "empty", preamble=use)
    assert out == {"count": TRIANGLES, "compile_seconds": 0}, err
    assert _entries(tmp_path / "empty") == []  # loaded, not copied
    _edit(tmp_path / "user.py", "MULT = 1", "MULT = 2")
    out, _ = _run(tmp_path, tmp_path / "empty", preamble=use)
    assert out["count"] == 2 * TRIANGLES and out["compile_seconds"] > 0


def test_cache_off_writes_nothing(tmp_path):
    _write_user_files(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    out, err = _run(tmp_path, "off")
    assert out["count"] == TRIANGLES
    assert out["compile_seconds"] > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # not even the default folder
    assert not (tmp_path / "off").exists()
    assert not _warning_lines(err), err


def test_recursive_code_is_compiled_in_each_process(tmp_path):
    # Numba links a recursive function's self-calls in the process that compiled
    # it; loaded elsewhere they crashed (numba#6061). Such code is never stored.
    _write_user_files(tmp_path)
    _edit(tmp_path / "helper.py", "    return c * 1\n",  # c, summed in halves; the int32 call
          "    if c > 1:\n"                                 # makes a second, mutual specialization
          "        return _scale(np.int32(c // 2)) + _scale(c - c // 2)\n    return c\n")
    _edit(tmp_path / "helper.py", "from numba import njit\n",
          "import numpy as np\nfrom numba import njit\n")
    out, err = _run(tmp_path, tmp_path / "cache")
    assert out["count"] == TRIANGLES and out["compile_seconds"] > 0
    assert not _warning_lines(err), err  # a limit of Numba, said once, not a warning
    assert [ln for ln in err.splitlines() if "recursive" in ln] == [
        "gthinker: Tri (CPU tasks) calls a recursive function, whose code Numba cannot keep; "
        "it is compiled in each process"]
    # The entry says so, and holds no code that another process could load.
    (entry,) = _entries(tmp_path / "cache")
    key, payload, not_kept = cache_files.unpack(entry.read_bytes())
    assert payload is None and "recursive" in not_kept
    out, err = _run(tmp_path, tmp_path / "cache")  # compiles again, and knew it would
    assert out["count"] == TRIANGLES and out["compile_seconds"] > 0
    assert "first run only" not in err and len(
        [ln for ln in err.splitlines() if "recursive" in ln]) <= 1, err


# ---- timing, in this process --------------------------------------------------------

TIMED = """
    def inner(x):
        s = 0
        for i in range(x):
            s += i * SALT
        return s

    def outer(x):
        return inner(x) + 1

    def bad(x):
        return x.no_such_attribute
"""


def _timed_functions(tmp_path, monkeypatch):
    """inner, outer (which calls inner) and bad (which does not compile), each kept in
    a fresh compile cache (their salt: this test's own code)."""
    monkeypatch.setenv(cache.ENV, str(tmp_path / "cache"))
    namespace = {"__name__": "timed", "SALT": hash(str(tmp_path)) % 1000 + 1}
    exec(textwrap.dedent(TIMED), namespace)
    for name in ("inner", "outer", "bad"):
        namespace[name] = cache.jit(f"test {name}")(namespace[name])
    return namespace


def _timed(fn, *args):
    """(seconds compile_seconds grew, wall seconds) over one call of ``fn``."""
    before, t0 = cache.compile_seconds(), time.perf_counter()
    fn(*args)
    return cache.compile_seconds() - before, time.perf_counter() - t0


def test_a_compile_inside_another_counts_once(tmp_path, monkeypatch):
    ns = _timed_functions(tmp_path, monkeypatch)
    compiled, wall = _timed(ns["outer"], 10)  # compiling outer compiles inner
    assert ns["outer"](10) == 45 * ns["SALT"] + 1
    assert 0 < compiled <= wall
    assert len(list((tmp_path / "cache" / "cpu").glob("timed.*.gtc"))) == 2


def test_a_compile_that_raises_stops_its_timing(tmp_path, monkeypatch):
    ns = _timed_functions(tmp_path, monkeypatch)
    with pytest.raises(TypingError):
        ns["bad"](1)
    compiled, wall = _timed(ns["inner"], 10)  # timed on its own, not inside bad's
    assert 0 < compiled <= wall


# ---- fingerprint, in this process --------------------------------------------------


def _define(source: str, name: str = "f", **scope):
    """Defines the function `name` by exec, as a fresh module would."""
    namespace = {"__name__": "usermod", "np": np, "njit": njit, **scope}
    exec(textwrap.dedent(source), namespace)
    return namespace[name]


PLAIN = """
    def f(x):
        return x * K + 1
"""


def test_fingerprint_same_source_same_digest():
    a, b = _define(PLAIN, K=2), _define(PLAIN, K=2)
    assert a is not b
    assert cache.fingerprint(a) == cache.fingerprint(b)
    assert len(cache.fingerprint(a)) == 64
    # a global the function does not read does not count
    assert cache.fingerprint(_define(PLAIN, K=2, UNUSED=1)) == cache.fingerprint(
        _define(PLAIN, K=2, UNUSED=2))


def test_fingerprint_changed_constant():
    assert cache.fingerprint(_define(PLAIN, K=2)) != cache.fingerprint(
        _define(PLAIN.replace("+ 1", "+ 2"), K=2))


def test_fingerprint_changed_global_value():
    base = cache.fingerprint(_define(PLAIN, K=2))
    assert base != cache.fingerprint(_define(PLAIN, K=3))
    assert base != cache.fingerprint(_define(PLAIN, K=2.0))
    arr = """
        def f(x):
            return x + W[0]
    """
    w = np.arange(4, dtype=np.int64)
    w2 = w.copy()
    w2[3] = 99
    assert cache.fingerprint(_define(arr, W=w)) == cache.fingerprint(_define(arr, W=w.copy()))
    assert cache.fingerprint(_define(arr, W=w)) != cache.fingerprint(_define(arr, W=w2))


def test_fingerprint_changed_closure_value():
    src = """
        def make(k):
            def f(x):
                return x * k
            return f
    """
    make = _define(src, "make")
    assert cache.fingerprint(make(2)) == cache.fingerprint(make(2))
    assert cache.fingerprint(make(2)) != cache.fingerprint(make(3))
    assert cache.fingerprint(make((1, 2))) != cache.fingerprint(make((1, 3)))


HELPER = """
    @njit
    def inner(x):
        return x + 1

    @njit
    def helper(x):
        return inner(x) * 2

    def f(x):
        return helper(x)
"""


def test_fingerprint_changed_njit_helper_body():
    base = cache.fingerprint(_define(HELPER))
    assert base == cache.fingerprint(_define(HELPER))
    assert base != cache.fingerprint(_define(HELPER.replace("* 2", "* 3")))
    # two calls deep
    assert base != cache.fingerprint(_define(HELPER.replace("x + 1", "x - 1")))
    # the dispatcher itself, as attach() sees a Task's compiled functions
    helper = _define(HELPER, "helper")
    assert cache.fingerprint(helper) == cache.fingerprint(_define(HELPER, "helper"))
    assert cache.fingerprint(helper) != cache.fingerprint(
        _define(HELPER.replace("x + 1", "x + 2"), "helper"))


def test_fingerprint_with_numpy_is_stable():
    src = """
        def f(n):
            out = np.empty(n, np.int32)
            out[:] = 7
            return out
    """
    a = _define(src)
    digest = cache.fingerprint(a)
    assert cache.fingerprint(a) == digest
    assert cache.fingerprint(_define(src)) == digest
    assert cache.fingerprint(_define(src.replace("= 7", "= 8"))) != digest


def test_a_hit_imports_no_module_its_code_was_compiled_from(tmp_path):
    """Each compiled function's environment names the module its code came from
    (np.sort's is numba.np.arraymath, whose import loads scipy.linalg); a hit rebuilds
    it without importing that module, and the code gives the same answer."""
    (tmp_path / "sorter.py").write_text(textwrap.dedent('''\
        import numpy as np
        from gthinker import compiler

        @compiler.jit("a sort")
        def ends(a):
            b = np.sort(a)
            return b[0] * 1000 + b[-1]
        '''))
    script = ("import json, sys\nimport numpy as np\nimport sorter\n"
              "r = int(sorter.ends(np.array([5, 3, 9, 1], np.int64)))\n"
              "print(json.dumps([r, 'numba.np.arraymath' in sys.modules]))\n")
    env = {**os.environ, "GTHINKER_CACHE_DIR": str(tmp_path / "cache"),
           "PYTHONPATH": os.pathsep.join([str(tmp_path), *filter(None, sys.path)])}
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env,
                                      capture_output=True, text=True, check=True).stdout)
            for _ in range(2)]
    assert runs == [[1009, True], [1009, False]]


def test_portable_build_options():
    from gthinker.cli import main
    from gthinker.cli.warmup import build_portable

    args = main.build_parser().parse_args(["warmup", "--portable", "x86-64-v2", "--part", "1/2"])
    assert (args.portable, args.part) == ("x86-64-v2", (1, 2))
    for bad in (["--part", "2/2"], ["--part", "x"], ["--portable", "x86-64-v9"]):
        with pytest.raises(SystemExit):
            main.build_parser().parse_args(["warmup", *bad])
    with pytest.raises(ValueError, match="x86-64-v3"):
        build_portable("haswell")
