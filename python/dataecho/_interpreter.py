# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""The import-time check that this interpreter can load the extension module.

The extension (_dataecho.<EXT_SUFFIX>) is built for one interpreter, recorded
in _build_info.py at build time. Another Python version or ABI would not find
it (a bare "cannot import name '_dataecho'"), and an interpreter without NumPy
would fail only at the first batch; check() raises an ImportError that says
which Python the package was built for instead.
"""

import importlib.util
import sys
import sysconfig


def _this_python():
    return f"Python {sys.version.split()[0]} ({sys.executable})"


def check(build_info):
    """Raises ImportError unless this interpreter matches `build_info`."""
    built = f"Python {build_info.PYTHON_VERSION} ({build_info.PYTHON_EXECUTABLE})"
    fix = ("run it with that interpreter, or build the package for this one: "
           "`python -m pip install --no-build-isolation .` with this python, or CMake with "
           "-DPython3_EXECUTABLE=...")
    here = ".".join(str(v) for v in sys.version_info[:2])
    there = ".".join(build_info.PYTHON_VERSION.split(".")[:2])
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    if here != there or suffix != build_info.EXT_SUFFIX:
        raise ImportError(
            f"dataecho was built for {built}, extension {build_info.EXT_SUFFIX!r}; this is "
            f"{_this_python()}, which loads {suffix!r}: {fix}")
    if importlib.util.find_spec("numpy") is None:
        raise ImportError(
            f"dataecho needs NumPy, which {_this_python()} cannot import; the package was "
            f"built for {built}. Install NumPy for this interpreter (Debian: python3-numpy; "
            f"a venv made with --system-site-packages sees it), or {fix}")
