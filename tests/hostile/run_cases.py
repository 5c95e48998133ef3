"""Runs the hostile-input suite: make_cases.py writes the files and their
expectations, and each case's `shardlens-cli` command runs here under resource limits.

Usage: run_cases.py SHARDLENS_CLI [-k SUBSTRING] [-j JOBS] [--keep DIR] [--json FILE]
                    [--no-torch] [--no-figures]

Every case runs in its own process group under RLIMIT_AS (the case's as_mb, so a regression
that allocates without bound dies there instead of taking the machine down) and RLIMIT_CORE 0,
with a wall-clock limit (killed past time_s). Checked for each case:
  - no signal: a crash (SIGSEGV, SIGABRT...) or a kill past the limits fails the case;
  - the exit code the case expects (2 a refused input, 1 a wrong diagnosis, 0 success);
  - stderr names the file (or flag, key) the case says, and holds no "internal error" and no
    bare "out of memory";
  - the child's own peak RSS (wait4's ru_maxrss) under rss_mb (the --max-memory budget plus a
    margin for the process itself);
  - the checks on files after the run (an input left byte for byte, a device not replaced,
    an SVG that parses as XML, CSV cells that cannot start a formula, LaTeX without \\input).

PENDING lists the cases that fail on main today and that another change is fixing: they run,
and a failure of theirs is reported as an expected failure (XFAIL); one that passes is
reported (XPASS) so that it can be taken off the list. Empty the list as the fixes land.
"""
import argparse
import csv
import glob
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import make_cases  # noqa: E402

# Cases that fail against main today (see docs/ROBUSTNESS.md); each fix empties its lines.
PENDING = set()


def limits(as_mb, fsize_kb=None):
    def apply():
        os.setsid()
        resource.setrlimit(resource.RLIMIT_AS, (as_mb << 20, as_mb << 20))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if fsize_kb:
            # A disk that fills: writes past the size fail (EFBIG) instead of raising SIGXFSZ.
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize_kb << 10, fsize_kb << 10))
    return apply


def run_one(cli, case):
    """(exit code or -signal, stderr, peak RSS in MB, wall seconds, timed out)."""
    start = time.monotonic()
    stdout = open(case["stdout"], "wb") if case.get("stdout") else subprocess.DEVNULL
    p = subprocess.Popen([cli] + case["args"], stdin=subprocess.DEVNULL,
                         stdout=stdout, stderr=subprocess.PIPE,
                         preexec_fn=limits(case["as_mb"], case.get("fsize_kb")), cwd=case["cwd"],
                         env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    timed_out = []

    def kill():
        timed_out.append(True)
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    timer = threading.Timer(case["time_s"], kill)
    timer.start()
    raw_err = p.stderr.read(1 << 20)
    p.stderr.close()
    if stdout is not subprocess.DEVNULL:
        stdout.close()
    err = raw_err.decode(errors="replace")
    _, status, usage = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return p.returncode, err.strip(), usage.ru_maxrss / 1024.0, time.monotonic() - start, \
        bool(timed_out), raw_err


# What no output may carry raw: C0 controls but tab, line feed and (in CSV's line ends)
# carriage return, DEL, C1 controls, the bidi embeddings, overrides and isolates, U+FFFE/F.
SHOWN_RAW = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069"
                       "\ufffe\uffff]")


def text_problems(name, data):
    """Why bytes written for a reader are not clean text, or nothing."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        return ["%s is not valid UTF-8: %s" % (name, e)]
    raw = SHOWN_RAW.search(text)
    return ["%s holds a raw U+%04X at %d" % (name, ord(raw.group()), raw.start())] if raw else []


def check_files(case):
    problems = []
    for kind, path, arg in case["checks"]:
        if kind == "unchanged":
            import hashlib
            try:
                with open(path, "rb") as f:
                    if hashlib.sha256(f.read()).hexdigest() != arg:
                        problems.append("%s was changed" % path)
            except OSError as e:
                problems.append("%s is gone: %s" % (path, e))
        elif kind == "no_staging":
            # No staging directory left in the output folder or beside it (for it: cases run
            # side by side in one folder).
            parent, name = os.path.split(os.path.abspath(path))
            left = [n for n in os.listdir(parent)
                    if n.startswith("." + name + ".shardlens-staging-")]
            for root, dirs, _ in os.walk(path):
                left += [os.path.join(root, d) for d in dirs if ".shardlens-staging-" in d]
            if left:
                problems.append("staging left behind: %s" % ", ".join(sorted(left)))
        elif kind == "absent":
            if os.path.lexists(path):
                problems.append("%s was written" % path)
        elif kind == "not_regular":
            if os.path.isfile(path) and not os.path.islink(path):
                problems.append("%s is now a regular file" % path)
        elif kind == "svg_xml":
            svgs = glob.glob(os.path.join(path, "**", "*.svg"), recursive=True)
            if not svgs:
                problems.append("no SVG under %s" % path)
            for svg in svgs:
                try:
                    ET.parse(svg)
                except ET.ParseError as e:
                    problems.append("%s is not well-formed XML: %s" % (svg, e))
        elif kind == "svg_inert":
            for svg in glob.glob(os.path.join(path, "**", "*.svg"), recursive=True):
                try:
                    root = ET.parse(svg).getroot()
                except ET.ParseError:
                    continue  # svg_xml names it
                for el in root.iter():
                    tag = el.tag.rsplit("}", 1)[-1].lower()
                    if tag in ("script", "foreignobject", "iframe", "object", "embed"):
                        problems.append("%s holds a <%s> element" % (svg, tag))
                    for attr, value in el.attrib.items():
                        attr = attr.rsplit("}", 1)[-1].lower()
                        if attr.startswith("on") or "javascript:" in value.lower():
                            problems.append("%s: %s=%r runs script" % (svg, attr, value[:60]))
        elif kind == "text_clean":
            files = [path] if os.path.isfile(path) else [
                f for f in glob.glob(os.path.join(path, "**", "*"), recursive=True)
                if f.rsplit(".", 1)[-1] in ("csv", "json", "tex", "svg", "txt")]
            if not files:
                problems.append("no text output at %s" % path)
            for name in files:
                with open(name, "rb") as f:
                    problems += text_problems(name, f.read())
        elif kind == "csv_quoted":
            files = glob.glob(os.path.join(path, "**", "*.csv"), recursive=True)
            if not files:
                problems.append("no CSV under %s" % path)
            for name in files:
                with open(name, newline="", encoding="utf-8", errors="replace") as f:
                    for row in csv.reader(f):
                        for cell in row:
                            if cell[:1] in ("=", "+", "-", "@", "\t", "\r") and \
                                    not _number(cell):
                                problems.append("%s: cell %r starts a formula" % (name, cell))
            # The class names come back as text: a formula-like one behind a ', each control
            # character as U+FFFD (csv.h).
            synced = os.path.join(path, "synced.csv")
            if os.path.exists(synced):
                with open(synced, newline="", encoding="utf-8") as f:
                    header = next(csv.reader(f))
                for n in json.loads(arg):
                    n = SHOWN_RAW.sub("\ufffd", n)
                    want = "'" + n if n[:1] in "=+-@" else n
                    if want not in header:
                        problems.append("%s: header %r lacks %r" % (synced, header, want))
        elif kind == "tex_no_input":
            files = glob.glob(os.path.join(path, "**", "*.tex"), recursive=True)
            if not files:
                problems.append("no .tex under %s" % path)
            for name in files:
                with open(name, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                if "\\input{" in text or "\x1b" in text or "\x07" in text:
                    problems.append("%s holds a raw \\input or control character" % name)
        else:
            problems.append("unknown check " + kind)
    return problems


def _number(cell):
    try:
        float(cell)
        return True
    except ValueError:
        return False


def judge(cli, case):
    code, err, rss, wall, timed_out, raw_err = run_one(cli, case)
    problems = text_problems("stderr", raw_err)
    if timed_out:
        problems.append("still running after %d s (killed)" % case["time_s"])
    elif code < 0:
        problems.append("killed by signal %d" % -code)
    elif code != case["exit"]:
        problems.append("exit %d, expected %d" % (code, case["exit"]))
    if case["exit"] != 0 and not timed_out:
        for needle in case["needles"]:
            if needle not in err:
                problems.append("message does not name %r" % needle)
    if "internal error" in err or err.endswith("shardlens-cli: out of memory"):
        problems.append("unclear message")
    if rss > case["rss_mb"]:
        problems.append("peak RSS %.0f MB over %d MB" % (rss, case["rss_mb"]))
    problems += check_files(case)
    first = err.splitlines()[0] if err else ""
    return {"name": case["name"], "category": case["category"], "exit": code, "rss": rss,
            "wall": wall, "message": first[:300], "problems": problems}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cli")
    ap.add_argument("-k", default="", help="run only cases whose name holds this")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--keep", help="write the files here (kept) instead of a temporary folder")
    ap.add_argument("--no-torch", action="store_true",
                    help="a build without LibTorch: leave out the .pt reader's cases")
    ap.add_argument("--no-figures", action="store_true",
                    help="a build without Qt: the exports are checked without SVG")
    ap.add_argument("--json", help="write each case's result to this file")
    a = ap.parse_args()
    cli = os.path.abspath(a.cli)
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="shardlens-hostile-") as tmp:
        out = a.keep or tmp
        os.makedirs(out, exist_ok=True)
        every = make_cases.make(cli, out, figures=not a.no_figures)
        unknown = set(PENDING) - {c["name"] for c in every}
        cases = [c for c in every if a.k in c["name"] and
                 not (a.no_torch and c["category"] == "pt")]
        made = time.monotonic() - start
        with ThreadPoolExecutor(a.j) as pool:
            results = list(pool.map(lambda c: judge(cli, c), cases))
    failed, xfail, xpass = [], [], []
    for r in results:
        state = "ok"
        if r["problems"]:
            state = "XFAIL" if r["name"] in PENDING else "FAIL"
        elif r["name"] in PENDING:
            state = "XPASS"
        {"FAIL": failed, "XFAIL": xfail, "XPASS": xpass}.get(state, []).append(r)
        print("%-5s %-14s %-44s exit %3d %5.0f MB %5.1f s  %s%s" % (
            state, r["category"], r["name"], r["exit"], r["rss"], r["wall"], r["message"][:110],
            "".join("\n      - " + p for p in r["problems"])))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    cats = {}
    for r in results:
        cats[r["category"]] = cats.get(r["category"], 0) + 1
    print("\n%d cases (%s), files made in %.1f s, all run in %.1f s" % (
        len(results), ", ".join("%s %d" % kv for kv in sorted(cats.items())), made,
        time.monotonic() - start))
    print("%d passed, %d failed, %d expected failures (PENDING), %d pending that now pass" % (
        len(results) - len(failed) - len(xfail) - len(xpass), len(failed), len(xfail),
        len(xpass)))
    for r in xpass:
        print("XPASS (take it off PENDING in tests/hostile/run_cases.py):", r["name"])
    if not a.k:
        for name in sorted(unknown):
            print("PENDING names no case:", name)
    for r in failed:
        print("FAIL:", r["name"], "; ".join(r["problems"]))
    return 1 if failed or (unknown and not a.k) else 0


if __name__ == "__main__":
    sys.exit(main())
