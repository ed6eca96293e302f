# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""The PEP 517 build backend of `pip install .` (pyproject.toml names it).

It needs nothing but the standard library and CMake, so it works offline with
Debian's pip (`--no-build-isolation`). build_wheel:

  1. configures a CMake build directory for the running interpreter (the
     library, the Python package and the programs: no tests, benchmarks or
     examples), outside the source tree (one per checkout and interpreter,
     under ~/.cache/dataecho/wheel-build/, locked while a build uses it), or
     reuses an existing one (`--config-settings=build-dir=build`: then only
     what changed is compiled);
  2. builds the target dataecho_python and the programs (`dataecho`,
     `echo_bench`), showing its progress on the terminal (pip keeps the
     backend's output for -v), and installs the component "python" (the
     pure-Python modules, the extension, _build_info.py) into a staging
     directory;
  3. zips that into a wheel tagged for this interpreter, the programs as its
     scripts (pip puts them in the environment's bin/).

Config settings (`pip install --config-settings=KEY=VALUE`, or the environment
variable in parentheses):
  build-dir    (DATAECHO_WHEEL_BUILD_DIR) the CMake build directory; default
               $XDG_CACHE_HOME (~/.cache)/dataecho/wheel-build/<checkout and
               interpreter>
  build-type   (DATAECHO_WHEEL_BUILD_TYPE) CMAKE_BUILD_TYPE of a new build
               directory; default Release
  jobs         (CMAKE_BUILD_PARALLEL_LEVEL) parallel compile jobs; default: CPUs
  tools        (DATAECHO_WHEEL_TOOLS) "on" (default): the programs `dataecho`
               and `echo_bench` as commands (they need libmicrohttpd and
               libpng); "off": the Python package alone
"""

import base64
import contextlib
import fcntl
import hashlib
import io
import os
import pathlib
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import tomllib
import zipfile

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _setting(config_settings, key, env, default=None):
    value = (config_settings or {}).get(key)
    if value is None:
        value = os.environ.get(env, default)
    return value


def _project():
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _version():
    text = (ROOT / "cmake" / "Version.cmake").read_text()
    return re.search(r"set\(DATAECHO_VERSION\s+([0-9.]+)\)", text).group(1)


def _tag():
    """(python tag, abi tag, platform tag) of this interpreter, as in wheel names."""
    impl = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    platform = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return impl, impl + sys.abiflags, platform


def _run(command, **kwargs):
    print("dataecho build:", " ".join(str(c) for c in command), file=sys.stderr, flush=True)
    subprocess.run([str(c) for c in command], check=True, stdout=sys.stderr, **kwargs)


def _terminal():
    """The controlling terminal, for progress pip would otherwise hide; None without one."""
    try:
        return open("/dev/tty", "w")  # noqa: SIM115 (closed by the caller)
    except OSError:
        return None


def _build(command):
    """Runs a `cmake --build`, its output to stderr (pip -v shows it) and its progress,
    "[ 42%] file", to the terminal if there is one."""
    print("dataecho build:", " ".join(str(c) for c in command), file=sys.stderr, flush=True)
    tty = _terminal()
    with subprocess.Popen([str(c) for c in command], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, errors="replace") as build:
        for line in build.stdout:
            sys.stderr.write(line)
            step = re.match(r"\[\s*(\d+)%\] (?:Building \w+ object |Linking \w+ )(.*)", line)
            if tty is not None and step:
                tty.write(f"\r\033[Kdataecho build: {step.group(1):>3}% {step.group(2)[-60:]}")
                tty.flush()
    if tty is not None:
        tty.write("\r\033[K")
        tty.close()
    if build.returncode != 0:
        raise subprocess.CalledProcessError(build.returncode, command)


def _default_build_dir():
    """One build directory per checkout and interpreter, outside the checkout: a later
    install compiles only what changed, and two checkouts or Pythons never share one."""
    cache = pathlib.Path(os.environ.get("XDG_CACHE_HOME") or pathlib.Path.home() / ".cache")
    key = hashlib.sha256(f"{ROOT}\0{sys.executable}".encode()).hexdigest()[:16]
    return cache / "dataecho" / "wheel-build" / key


@contextlib.contextmanager
def _locked(build_dir):
    """Holds build_dir for this install: a second install of the same checkout waits."""
    build_dir.mkdir(parents=True, exist_ok=True)
    with open(build_dir / ".dataecho-wheel.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"dataecho build: waiting for another install using {build_dir}",
                  file=sys.stderr, flush=True)
            fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _configure(build_dir, config_settings):
    """Configures build_dir unless it is; whether it builds the programs."""
    cache = build_dir / "CMakeCache.txt"
    if cache.exists():
        text = cache.read_text()
        python = re.search(r"^Python3_EXECUTABLE:\w+=(.*)$", text, re.M)
        print(f"dataecho build: reusing {build_dir} (Python "
              f"{python.group(1) if python else '?'})", file=sys.stderr)
        return re.search(r"^DATAECHO_BUILD_TOOLS:BOOL=ON$", text, re.M) is not None
    build_type = _setting(config_settings, "build-type", "DATAECHO_WHEEL_BUILD_TYPE", "Release")
    tools = _setting(config_settings, "tools", "DATAECHO_WHEEL_TOOLS", "on").lower()
    if tools not in ("on", "off"):
        raise ValueError(f"dataecho build: tools must be on or off, got {tools!r}")
    # A tree made for one install and not edited: a unity build (sources
    # compiled in batches) takes about half the compile time.
    _run(["cmake", "-S", ROOT, "-B", build_dir, f"-DCMAKE_BUILD_TYPE={build_type}",
          f"-DPython3_EXECUTABLE={sys.executable}", "-DDATAECHO_BUILD_PYTHON=ON",
          "-DDATAECHO_BUILD_TESTS=OFF", "-DDATAECHO_BUILD_BENCHMARKS=OFF",
          "-DDATAECHO_BUILD_EXAMPLES=OFF", f"-DDATAECHO_BUILD_TOOLS={tools.upper()}",
          "-DDATAECHO_UNITY_BUILD=ON"])
    return tools == "on"


def _check_interpreter(package):
    """The extension must be for this interpreter (a reused build dir may be another's)."""
    info = {}
    exec((package / "_build_info.py").read_text(), info)  # noqa: S102 (our own file)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if info["EXT_SUFFIX"] != suffix:
        raise RuntimeError(
            f"the build directory is for Python {info['PYTHON_VERSION']} "
            f"({info['PYTHON_EXECUTABLE']}, {info['EXT_SUFFIX']}), not this one "
            f"({sys.executable}, {suffix}): use another build-dir")


def _record_line(path, arcname):
    data = path.read_bytes()
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _metadata(version):
    project = _project()
    lines = ["Metadata-Version: 2.1", f"Name: {project['name']}", f"Version: {version}",
             f"Summary: {project['description']}",
             f"Requires-Python: {project['requires-python']}",
             f"License: {project['license']['text']}"]
    lines += [f"Requires-Dist: {d}" for d in project.get("dependencies", [])]
    return "\n".join(lines) + "\n"


def _dist_info_files(version):
    """{name in the .dist-info directory: text} but RECORD."""
    impl, abi, platform = _tag()
    return {"METADATA": _metadata(version),
            "WHEEL": (f"Wheel-Version: 1.0\nGenerator: dataecho_build\n"
                      f"Root-Is-Purelib: false\nTag: {impl}-{abi}-{platform}\n"),
            "top_level.txt": "dataecho\n"}


def _write_wheel(package, wheel_directory, version, scripts=()):
    """The wheel of `package` (a directory) and `scripts` (programs for bin/)."""
    impl, abi, platform = _tag()
    name = f"dataecho-{version}-{impl}-{abi}-{platform}.whl"
    dist_info = f"dataecho-{version}.dist-info"
    files = {f"{dist_info}/{k}": v for k, v in _dist_info_files(version).items()}
    record = []
    path = pathlib.Path(wheel_directory) / name
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for f in sorted(package.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                arcname = f"dataecho/{f.relative_to(package).as_posix()}"
                wheel.write(f, arcname)
                record.append(_record_line(f, arcname))
        for f in scripts:  # executable (pip keeps the mode bits of a wheel's scripts)
            arcname = f"dataecho-{version}.data/scripts/{f.name}"
            info = zipfile.ZipInfo(arcname)
            info.external_attr = 0o100755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, f.read_bytes())
            record.append(_record_line(f, arcname))
        for arcname, text in files.items():
            wheel.writestr(arcname, text)
            data = text.encode()
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            record.append(f"{arcname},sha256={digest.decode()},{len(data)}")
        record.append(f"{dist_info}/RECORD,,")
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(record) + "\n")
    return name


# --- PEP 517 hooks ---

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    """The wheel's .dist-info without building it (pip asks for it first)."""
    version = _version()
    dist_info = pathlib.Path(metadata_directory) / f"dataecho-{version}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    for name, text in _dist_info_files(version).items():
        (dist_info / name).write_text(text)
    return dist_info.name


# The programs a wheel installs as commands: (CMake target, file in the build directory).
PROGRAMS = (("dataecho_cli", "tools/dataecho/dataecho"),
            ("echo_bench", "tools/echo_bench/echo_bench"))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    build_dir = pathlib.Path(_setting(config_settings, "build-dir", "DATAECHO_WHEEL_BUILD_DIR",
                                      _default_build_dir())).resolve()
    with _locked(build_dir):
        tools = _configure(build_dir, config_settings)
        jobs = _setting(config_settings, "jobs", "CMAKE_BUILD_PARALLEL_LEVEL",
                        os.cpu_count() or 1)
        targets = ["dataecho_python"] + ([t for t, _ in PROGRAMS] if tools else [])
        _build(["cmake", "--build", build_dir, "--target", *targets, "-j", jobs])
        scripts = [build_dir / f for _, f in PROGRAMS] if tools else []
        with tempfile.TemporaryDirectory() as staging:
            _run(["cmake", "--install", build_dir, "--component", "python", "--prefix", staging])
            (init,) = pathlib.Path(staging).rglob("dataecho/__init__.py")
            _check_interpreter(init.parent)
            return _write_wheel(init.parent, wheel_directory, _version(), scripts)


def build_sdist(sdist_directory, config_settings=None):
    """The files git tracks, as dataecho-VERSION.tar.gz (needs a git checkout)."""
    version = _version()
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, check=True,
                           capture_output=True).stdout.decode().split("\0")
    name = f"dataecho-{version}.tar.gz"
    with tarfile.open(pathlib.Path(sdist_directory) / name, "w:gz") as tar:
        for f in filter(None, files):
            if (ROOT / f).is_file():
                tar.add(ROOT / f, arcname=f"dataecho-{version}/{f}")
        info = tarfile.TarInfo(f"dataecho-{version}/PKG-INFO")
        data = _metadata(version).encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return name


__all__ = ["build_sdist", "build_wheel", "get_requires_for_build_sdist",
           "get_requires_for_build_wheel", "prepare_metadata_for_build_wheel"]
