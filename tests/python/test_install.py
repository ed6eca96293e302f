# Copyright 2026 The dataecho Authors. Licensed under the Apache License 2.0.
"""`cmake --install` puts a working package into the prefix's Python site folder."""

import os
import re
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
