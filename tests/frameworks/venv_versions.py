"""The venv's frameworks are exactly the pinned versions of requirements/frameworks.txt."""
import sys

import frameworks

frameworks.require_venv()
import importlib.metadata as m  # noqa: E402

pins = {}
for line in open(sys.argv[1]):
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split("==")
        pins[name] = version
bad = {n: (v, m.version(n)) for n, v in pins.items() if m.version(n) != v}
assert not bad, "venv versions differ from the pins: %s" % bad
import torch  # noqa: E402
assert torch.__version__.split("+")[0] == pins["torch"], torch.__version__
print("venv holds the pins: %s" % ", ".join("%s %s" % kv for kv in sorted(pins.items())))
