"""The install's one step beyond pyproject.toml: an editable install (`pip install -e .`) compiles
the engines with mypyc where it can (`python -m games._build`, games/_build.py). It never fails
the install: without a C compiler, or when the build fails, the engines run as pure Python and
`cardshark games --verbose` says why."""

from __future__ import annotations

import os
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyAndEngines(build_py):
    """build_py that first compiles games/ in place, for editable installs only (a wheel would
    need its extension modules tagged for the platform; a non-editable install is pure Python)."""

    def run(self) -> None:
        """Compile (in a child: the build environment's mypy, none of setuptools' state), then
        do what build_py does."""
        if self.editable_mode:
            root = os.path.dirname(os.path.abspath(__file__))
            subprocess.run([sys.executable, "-m", "games._build"], cwd=root, check=False)
        super().run()


setup(cmdclass={"build_py": BuildPyAndEngines})
