"""Runs the recorder's pytest tests in the project's venv (scripts/venv.sh): ctest's entry.

Usage: run_pytest.py [--debian-torch] [pytest arguments...]. Re-executes itself in the venv's
interpreter (tests/frameworks/frameworks.py: exit 77, a ctest skip, without the venv; a
failure under CI=true). With --debian-torch it runs under Debian's /usr/bin/python3 instead,
whose python3-torch is torch 1.13 (and python3-pytest its pytest): the recorder supports
both, so the tests that need no other framework run under each. Exits 77 when every test it
ran skipped (a missing tool), else pytest's status.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "frameworks"))
import frameworks  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"


def use_interpreter():
    """The venv's interpreter, or Debian's with --debian-torch. The choice is kept in the
    environment: processes the tests spawn (torch.multiprocessing) import this module again
    without the argument, and must stay with the same interpreter."""
    if "--debian-torch" in sys.argv:
        sys.argv.remove("--debian-torch")
        os.environ["SHARDLENS_TEST_DEBIAN_TORCH"] = "1"
    if os.environ.get("SHARDLENS_TEST_DEBIAN_TORCH") != "1":
        frameworks.require_venv()
        return
    if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON):
        os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
    for module, package in (("pytest", "python3-pytest"), ("torch", "python3-torch"),
                            ("numpy", "python3-numpy")):
        try:
            __import__(module)
        except ImportError:
            frameworks.skip("%s cannot import %s (Debian's %s)" % (DEBIAN_PYTHON, module, package))


use_interpreter()
import pytest  # noqa: E402


class Outcomes:
    """Counts what ran, so a run of skips alone reads as a skip to ctest."""

    def __init__(self):
        self.counts = {}

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            self.counts[report.outcome] = self.counts.get(report.outcome, 0) + 1


def main():
    outcomes = Outcomes()
    status = pytest.main(["-p", "no:cacheprovider", "--rootdir", HERE, "-v", "-rs"] +
                         sys.argv[1:], plugins=[outcomes])
    if status == 0 and set(outcomes.counts) == {"skipped"}:
        return frameworks.SKIP
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
