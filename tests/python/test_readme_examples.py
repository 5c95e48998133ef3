"""The documented Lightning, Accelerate and plain-PyTorch examples, run as users run them,
from the package pip installs.

Run by pytest (tests/python, with --cli SHARDLENS_CLI). What the pages show is what is run:
each block of the recorder's guide page (docs/RECORDER.md) marked
`<!-- example: integrations/python/examples/X.py -->` must be X.py verbatim, and each of the
README's quickstart blocks, marked `<!-- quickstart: integrations/python/examples/X.py -->`,
must be lines of X.py in X.py's order (indentation aside), so the front page cannot drift from
the tested files. These two checks need neither the frameworks nor the CLI.

Then installs integrations/python with the venv's pip into a temporary --target (offline:
--no-build-isolation --no-deps --no-index; the shared venv is not touched), checks the
installed version is CMakeLists.txt's project VERSION, and runs each X.py with only the
installed package on PYTHONPATH: the Lightning one as a 4-rank CPU fit (Lightning launches
the ranks), the Accelerate one as 4 processes (the variables torchrun sets), each printing
rank 0's verdict lines and leaving a run file; the plain-PyTorch one as 4 processes whose
dumps import and diagnose with the CLI.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import frameworks
import pytest

EXAMPLES = os.path.join(frameworks.RECORDER_DIR, "examples")
NAMES = ("lightning_example.py", "accelerate_example.py", "torch_example.py",
         "hf_trainer_example.py",  # run by test_hf_trainer.py
         "hf_token_classification_example.py")  # run by test_hf_tokens.py
GUIDE = os.path.join("docs", "RECORDER.md")


def marked_blocks(page, marker):
    """{example file name: code} of the ```python blocks of PAGE after `<!-- MARKER: PATH -->`;
    PATH must name a file of integrations/python/examples."""
    with open(os.path.join(frameworks.ROOT, page)) as f:
        text = f.read()
    found = re.findall(r"<!-- %s: (\S+) -->\n```python\n(.*?)```" % marker, text, re.S)
    blocks = {}
    for path, code in found:
        assert os.path.normpath(os.path.join(frameworks.ROOT, path)) == os.path.join(
            EXAMPLES, os.path.basename(path)), "%s: %s is not an example file" % (page, path)
        assert os.path.basename(path) not in blocks, "%s: two blocks for %s" % (page, path)
        blocks[os.path.basename(path)] = code
    return blocks


def test_guide_blocks_are_the_examples():
    blocks = marked_blocks(GUIDE, "example")
    assert sorted(blocks) == sorted(NAMES), "%s's example blocks: %s" % (GUIDE, sorted(blocks))
    for name in NAMES:
        with open(os.path.join(EXAMPLES, name)) as f:
            assert blocks[name] == f.read(), "%s's block for %s is not the file" % (GUIDE, name)


def test_readme_quickstarts_are_in_the_examples():
    """Every line of a quickstart is a line of its example, in the example's order."""
    blocks = marked_blocks("README.md", "quickstart")
    assert sorted(blocks) == sorted(NAMES), "README's quickstart blocks: %s" % sorted(blocks)
    for name, code in blocks.items():
        with open(os.path.join(EXAMPLES, name)) as f:
            lines = [line.strip() for line in f]
        at = 0
        for line in (line.strip() for line in code.splitlines()):
            if not line:
                continue
            assert line in lines[at:], ("README's quickstart line %r is not a line of %s after "
                                        "the lines before it" % (line, name))
            at = lines.index(line, at) + 1


def install(tmp):
    src = os.path.join(tmp, "src")
    shutil.copytree(frameworks.RECORDER_DIR, src, ignore=shutil.ignore_patterns(
        "__pycache__", "examples"))
    target = os.path.join(tmp, "target")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "--target", target,
                        "--no-build-isolation", "--no-deps", "--no-index", src],
                       capture_output=True, text=True,
                       env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(frameworks.ROOT, "CMakeLists.txt")) as f:
        want = re.search(r"project\s*\(\s*\w+\s+VERSION\s+([0-9.]+)", f.read()).group(1)
    dist = glob.glob(os.path.join(target, "shardlens_recorder-*.dist-info"))
    assert [os.path.basename(d) for d in dist] == ["shardlens_recorder-%s.dist-info" % want], dist
    return target, want


def env_for(target, cli):
    env = dict(os.environ, PYTHONPATH=target, OMP_NUM_THREADS="1", SHARDLENS_CLI=cli)
    for var in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_PORT", "PL_GLOBAL_SEED"):
        env.pop(var, None)
    env["MASTER_PORT"] = str(frameworks.free_port())  # Lightning launches there
    return env


def verdicts(log, count, where):
    lines = ["ShardLens: " + line.split("ShardLens: ", 1)[1] for line in log.splitlines()
             if "ShardLens: " in line and "Warning" not in line]
    assert len(lines) == count, "%s: %d verdict lines, want %d:\n%s" % (where, len(lines),
                                                                        count, log[-4000:])
    for line in lines:
        assert os.path.exists(os.path.join(where, line.rsplit("see ", 1)[1])), line
    return lines


def like_equals(cli, run):
    """`shardlens-cli simulate --like RUN` with no other flag (run from elsewhere than the
    script's directory) reproduces the run: EQUALS per rank and synced, exit 0."""
    r = subprocess.run([cli, "simulate", "--like", run], capture_output=True, text=True)
    assert r.returncode == 0 and "EQUALS" in r.stdout, r.stdout + r.stderr
    return r.stdout


def lightning(target, cli, tmp):
    work = os.path.join(tmp, "lightning")
    os.makedirs(work)
    start = time.time()
    r = subprocess.run([sys.executable, os.path.join(EXAMPLES, "lightning_example.py")],
                       cwd=work, capture_output=True, text=True, timeout=400,
                       env=env_for(target, cli))
    log = r.stdout + r.stderr
    assert r.returncode == 0, log[-5000:]
    lines = verdicts(log, 2, work)
    assert all("batch-limit-subset" in line for line in lines), lines
    for line in lines:
        like_equals(cli, os.path.join(work, line.rsplit("see ", 1)[1]))
    print("lightning_example.py (4 ranks, %.0f s): %s" % (time.time() - start, lines[0]))


def accelerate(target, cli, tmp):
    work = os.path.join(tmp, "accelerate")
    os.makedirs(work)
    start = time.time()
    logs = processes("accelerate_example.py", target, cli, work)
    lines = verdicts(logs[0], 1, work)
    assert lines[0].startswith("ShardLens: the reported matrix is exact"), lines
    like_equals(cli, os.path.join(work, lines[0].rsplit("see ", 1)[1]))
    print("accelerate_example.py (4 processes, %.0f s): %s" % (time.time() - start, lines[0]))


def processes(script, target, cli, work):
    """SCRIPT as 4 processes with the variables torchrun sets; their combined output."""
    port = str(frameworks.free_port())
    procs = []
    for r in range(4):
        env = dict(env_for(target, cli), RANK=str(r), LOCAL_RANK=str(r), WORLD_SIZE="4",
                   LOCAL_WORLD_SIZE="4", MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        procs.append(subprocess.Popen([sys.executable, os.path.join(EXAMPLES, script)],
                                      cwd=work, env=env, text=True, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT))
    logs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, "\n".join(log[-3000:] for log in logs)
    return logs


def plain_torch(target, cli, tmp):
    """The explicit recorder: dumps every epoch, imported and diagnosed as the guide says."""
    import numpy as np
    work = os.path.join(tmp, "torch")
    os.makedirs(work)
    start = time.time()
    processes("torch_example.py", target, cli, work)
    files = sorted(glob.glob(os.path.join(work, "runs", "eval_epoch1_rank*.npz")))
    assert len(files) == 4, files
    run = os.path.join(work, "e1.slrun")
    labels = os.path.join(work, "runs", "labels.npy")
    r = subprocess.run([cli, "import", *files, "--dataset", "npy:" + labels, "--out", run],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    report = frameworks.cli_json(cli, "diagnose", "--run", run)
    report = report["epochs"][0] if "epochs" in report else report
    # The loader and the sync given: --like needs nothing and assumes nothing.
    out = like_equals(cli, run)
    assert "note:" not in out, out
    # The user's own labels are the truth: the class counts are theirs, not an estimate, and
    # 1000 samples on 4 ranks neither pad nor drop, with the reported matrix recorded.
    truth = np.bincount(np.load(labels), minlength=10).tolist()
    assert report["class_counts"] == truth, (report["class_counts"], truth)
    assert "estimated" not in report["verdict"], report["verdict"]
    assert report["verdict"]["synced_origin"] == "recorded", report["verdict"]
    assert report["correct"], report["verdict"]
    pads = sorted({d["pattern"] for d in report.get("diagnosis", [])})
    print("torch_example.py (4 processes, %.0f s): 2 epochs of dumps; diagnose: %s, patterns %s"
          % (time.time() - start, "correct" if report.get("correct") else "wrong", pads))


def test_readme_examples_run_as_written(cli):
    for module in ("numpy", "lightning", "accelerate"):
        pytest.importorskip(module)
    with tempfile.TemporaryDirectory() as tmp:
        target, version = install(tmp)
        print("pip install --target: shardlens_recorder %s (= CMakeLists.txt VERSION)" % version)
        lightning(target, cli, tmp)
        accelerate(target, cli, tmp)
        plain_torch(target, cli, tmp)
