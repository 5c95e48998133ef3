"""Builds outside the source tree: pip builds a local directory in place, and setuptools
would write build/ and *.egg-info next to this file, which fails where the tree is read-only
(/usr/share/shardlens/python from the .deb) and litters a checkout. The metadata is in
pyproject.toml; the package is shardlens_recorder (a directory of modules)."""
import os
import shutil
import tempfile

from setuptools import setup

_tmp = tempfile.mkdtemp(prefix="shardlens-recorder-build-")
try:
    setup(packages=["shardlens_recorder"],
          # The dump format's schema, which the writer reads (dump_format.json).
          package_data={"shardlens_recorder": ["*.json"]},
          options={"build": {"build_base": os.path.join(_tmp, "build")},
                   "egg_info": {"egg_base": _tmp}})
finally:
    shutil.rmtree(_tmp, ignore_errors=True)
