"""What every recorder test shares: the recorder's source on sys.path (tests/frameworks'
helpers beside it), the CLI and the dump reader probe under test (--cli, --probe), and one
policy for a missing framework or tool: a skip, which under CI=true is a failure.

SHARDLENS_RECORDER_WITHOUT_LIGHTNING=1 hides Lightning from the interpreter before the
recorder is imported, as on a machine without it (the callback's base is then a plain class).
"""
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
RECORDER_DIR = os.path.join(ROOT, "integrations", "python")
sys.path[:0] = [RECORDER_DIR, os.path.join(ROOT, "tests", "frameworks"), HERE]

if os.environ.get("SHARDLENS_RECORDER_WITHOUT_LIGHTNING") == "1":
    for hidden in ("lightning", "lightning.pytorch", "pytorch_lightning"):
        sys.modules[hidden] = None  # import raises ImportError


def in_ci():
    return os.environ.get("CI", "").lower() == "true"


def pytest_addoption(parser):
    parser.addoption("--cli", default=os.environ.get("SHARDLENS_CLI"),
                     help="the shardlens-cli under test")
    parser.addoption("--probe", default=None, help="the dump reader probe (dump_format_probe)")
    parser.addoption("--cli-has-libtorch", default=None, choices=("0", "1"),
                     help="whether the CLI under test was built with LibTorch (reads .pt)")


def _tool(request, option, what):
    path = request.config.getoption(option)
    if not path or not os.path.exists(path):
        pytest.skip("%s not given (%s)" % (what, option))
    return os.path.abspath(path)


@pytest.fixture
def cli(request):
    return _tool(request, "--cli", "shardlens-cli (or $SHARDLENS_CLI)")


@pytest.fixture
def cli_reads_pt(request):
    """What the build says, not what the CLI answers: a CLI that should read .pt and refuses
    fails the test instead of skipping it."""
    said = request.config.getoption("--cli-has-libtorch")
    if said is None:
        pytest.skip("--cli-has-libtorch not given (the build says whether the CLI reads .pt)")
    return said == "1"


@pytest.fixture
def probe(request):
    return _tool(request, "--probe", "dump_format_probe (the C++ reader's view of a dump)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI=true a skip fails: in CI a missing framework or tool is an error."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and in_ci() and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = "CI=true, a skip fails: %s" % (reason,)
