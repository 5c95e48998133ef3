"""The guide's Accelerate check (docs/FRAMEWORKS.md), run exactly as the guide shows it.

Usage: accelerate_readme.py SHARDLENS_CLI. Extracts the script between the page's
`accelerate-check` markers, runs it in a fresh directory with the venv's python (4 real
Accelerate processes, then shardlens-cli), and compares its output with the lines the page
says it prints.
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

PAGE = os.path.join("docs", "FRAMEWORKS.md")


def main():
    cli = os.path.abspath(sys.argv[1])
    with open(os.path.join(frameworks.ROOT, PAGE)) as f:
        text = f.read()
    block = re.search(r"<!-- accelerate-check begin -->\n```python\n(.*?)```\n"
                      r"<!-- accelerate-check end -->\n\nIt prints:\n\n```\n(.*?)```", text,
                      re.S)
    if not block:
        print("FAIL: %s has no accelerate-check script followed by its output" % PAGE)
        sys.exit(1)
    script, printed = block.group(1), block.group(2)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "check_accelerate.py")
        with open(path, "w") as f:
            f.write(script)
        env = dict(os.environ, MASTER_PORT=str(frameworks.free_port()))
        proc = subprocess.run([sys.executable, path, cli], cwd=d, capture_output=True, text=True,
                              timeout=240, env=env)
    if proc.returncode != 0:
        print("FAIL: the script of %s exited %d:\n%s" % (PAGE, proc.returncode,
                                                         proc.stderr[-3000:]))
        sys.exit(1)
    if proc.stdout != printed:
        print("FAIL: the script of %s printed\n%s\nbut the page says\n%s" % (
            PAGE, proc.stdout, printed))
        sys.exit(1)
    print(proc.stdout, end="")
    print("the Accelerate script of %s runs as shown" % PAGE)


if __name__ == "__main__":
    main()
