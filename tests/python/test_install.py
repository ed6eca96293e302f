# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""`cmake --install` and `pip install .` put a working package into a Python site folder."""

import os
import pathlib
import re
import shutil
import subprocess
import sys


def test_installed_package_imports(build_dir, tmp_path):
    cache = (build_dir / "CMakeCache.txt").read_text()
    site = re.search(r"^DATAECHO_PYTHON_INSTALL_DIR:\w+=(.*)$", cache, re.M).group(1)
    subprocess.run(["cmake", "--install", str(build_dir), "--component", "python", "--prefix",
                    str(tmp_path)], check=True, capture_output=True, timeout=120)
    installed = tmp_path / site / "dataecho"
    assert (installed / "__init__.py").exists() and (installed / "torch.py").exists()
    code = ("import dataecho, numpy as np; "
            "b = next(dataecho.from_arrays(np.zeros((4, 2), np.uint8)).batch(batch_size=4)); "
            "print(dataecho.__file__, b.num_rows)")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60,
                            env=dict(os.environ, PYTHONPATH=str(tmp_path / site)))
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{installed / '__init__.py'} 4\n"


def _clean_env():
    """The environment without the build tree on PYTHONPATH (scripts/pytest.sh sets it)."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


def test_pip_install_into_a_fresh_venv(build_dir, tmp_path):
    """`pip install --no-build-isolation .` (PEP 517, pyproject.toml) into a fresh venv, reusing
    the configured build directory (config setting build-dir): then `import dataecho` works
    from any directory, and an interpreter that cannot load it gets an ImportError saying
    which Python the package was built for. (About 10 s: the venv, pip, no compilation.)"""
    root = pathlib.Path(__file__).resolve().parents[2]
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True, capture_output=True, timeout=120)
    python = venv / "bin" / "python"
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-build-isolation", "--no-index",
         "--no-cache-dir", f"--config-settings=build-dir={build_dir}", str(root)],
        capture_output=True, text=True, timeout=600, env=_clean_env())
    assert pip.returncode == 0, pip.stdout + pip.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import dataecho, numpy as np; "
            "b = next(dataecho.from_arrays(np.zeros((4, 2), np.uint8)).batch(batch_size=4)); "
            "print(dataecho.__file__, b.num_rows, dataecho.AUTOTUNE)")
    run = subprocess.run([str(python), "-c", code], cwd=elsewhere, capture_output=True,
                         text=True, timeout=60, env=_clean_env())
    assert run.returncode == 0, run.stderr
    installed = pathlib.Path(run.stdout.split()[0]).parent
    assert installed.is_relative_to(venv) and run.stdout.split()[1:] == ["4", "AUTOTUNE"]
    # The programs are commands of the environment (the build directory builds them).
    for program, says in (("dataecho", "Usage: dataecho <command>"), ("echo_bench", "--latency_ms")):
        ran = subprocess.run([str(venv / "bin" / program), "--help"], capture_output=True,
                             text=True, timeout=60, env=_clean_env())
        assert ran.returncode == 0 and says in ran.stdout + ran.stderr, ran.stdout + ran.stderr

    # Without NumPy (-S: no site-packages, so no Debian NumPy): ImportError at import.
    no_numpy = subprocess.run(
        [str(python), "-S", "-c", f"import sys; sys.path.insert(0, {str(installed.parent)!r}); "
                                  "import dataecho"],
        cwd=elsewhere, capture_output=True, text=True, timeout=60, env=_clean_env())
    assert no_numpy.returncode != 0
    built_for = re.search(r'PYTHON_EXECUTABLE = "(.*)"',
                          (installed / "_build_info.py").read_text()).group(1)
    assert "ImportError: dataecho needs NumPy" in no_numpy.stderr
    assert f"built for Python {'.'.join(map(str, sys.version_info[:2]))}" in no_numpy.stderr
    assert f"({built_for})" in no_numpy.stderr

    # Built for another Python: the copy's build info says 3.99.
    other = tmp_path / "other" / "dataecho"
    # Without the compiled bytecode: a .pyc of the original _build_info.py made in the same
    # second as the rewrite below would still pass as up to date.
    shutil.copytree(installed, other, ignore=shutil.ignore_patterns("__pycache__"))
    info = other / "_build_info.py"
    text = re.sub(r'PYTHON_VERSION = ".*"', 'PYTHON_VERSION = "3.99.0"', info.read_text())
    info.write_text(re.sub(r'EXT_SUFFIX = ".*"', 'EXT_SUFFIX = ".cpython-399-x86_64-linux-gnu.so"',
                           text))
    wrong = subprocess.run([str(python), "-c", "import dataecho"], cwd=other.parent,
                           capture_output=True, text=True, timeout=60, env=_clean_env())
    assert "ImportError: dataecho was built for Python 3.99.0" in wrong.stderr, wrong.stderr
    assert f"this is Python {sys.version.split()[0]}" in wrong.stderr


def test_pip_builds_outside_the_checkout_one_directory_per_checkout_and_python():
    """The backend's default build directory: under the user's cache, never in the source
    tree, and another for another interpreter (so two installs of one checkout never
    write into one tree, and a later install reuses its own)."""
    root = pathlib.Path(__file__).resolve().parents[2]
    sys.path.insert(0, str(root / "python" / "build_backend"))
    try:
        import dataecho_build
    finally:
        sys.path.pop(0)
    here = dataecho_build._default_build_dir()
    assert not here.is_relative_to(root)
    assert here.parent.name == "wheel-build"
    real = sys.executable
    try:
        sys.executable = "/usr/bin/python3.99"
        other = dataecho_build._default_build_dir()
    finally:
        sys.executable = real
    assert other != here and other.parent == here.parent
