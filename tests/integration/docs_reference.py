"""The user guide against what it describes: docs/CLI.md against `shardlens-cli --help`,
docs/LESSONS.md against `shardlens-cli lessons`, and every relative link and repository path
of README.md and docs/*.md against the tree.

Usage: docs_reference.py SHARDLENS_CLI [SOURCE_ROOT]

CLI reference: the subcommands `shardlens-cli --help` lists are exactly the `## \\`SUB\\``
sections of docs/CLI.md. In each section the first cells of its tables name the flags
(`| \\`--flag VALUE\\` | ... |`), and a row linking [the scenario flags](#scenario-flags)
stands for the flags of that section's table; together they must be exactly the flags of
`shardlens-cli SUB --help` (-h/--help aside). The "Global options" section must be the
flags of `shardlens-cli --help`. Any other `--flag` the page mentions, and any flag given to
`shardlens-cli` (or `$B`) in a shell block of README.md or docs/*.md, must be a flag of
some command.

Links: every relative markdown link and image of README.md and docs/*.md names an existing
file or folder, and a `#fragment` names a heading of the page it points to (GitHub's slugs).
Every script the pages name (`scripts/...sh` or `.py`, in code or prose) exists.

Paths: every word of an inline code span (fenced blocks aside) that starts with a top folder
of the repository (core/, ui/, app/, tests/, ...) names an existing file or folder; one with
a `*` (`ui/jobs/real_run_job.*`) must match at least one file, and a placeholder such as
`<target>` stands for any one name.

Lessons: the preset table of docs/LESSONS.md (`| preset | what it shows |`) has a row for
every preset `shardlens-cli lessons` lists and for no other, each with the preset's title.

Exits 1 naming every mismatch, 0 when there is none.
"""
import glob
import os
import re
import subprocess
import sys

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
FENCE = re.compile(r"^```.*?^```[ \t]*$", re.S | re.M)


def help_text(cli, *sub):
    r = subprocess.run([cli, *sub, "--help"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit("FAIL: %s %s --help exited %d: %s" % (cli, " ".join(sub), r.returncode, r.stderr))
    return r.stdout


def help_sections(text):
    """{section title ("Options", "Subcommands", "Positionals"): [its entry lines]}."""
    sections, current = {}, None
    for line in text.splitlines():
        m = re.match(r"^(\w[\w ]*):$", line)
        if m:
            current = sections.setdefault(m.group(1), [])
        elif current is not None and line.strip():
            current.append(line)
    return sections


def help_flags(text):
    """The long flags of one --help (the entry lines of its Options, not their wrapped help)."""
    flags = set()
    for line in help_sections(text).get("Options", []):
        m = re.match(r"^  (?:-\w,)?(--[a-z][a-z0-9-]*)", line)
        if m:
            flags.add(m.group(1))
    return flags - {"--help"}


def subcommands(text):
    return {m.group(1) for line in help_sections(text).get("Subcommands", [])
            for m in [re.match(r"^  ([a-z][a-z0-9-]*)\b", line)] if m}


def page_sections(text):
    """[(heading of a ## section, its text)] of a page, fenced blocks left out."""
    text = FENCE.sub("", text)
    parts = re.split(r"^## (.*)$", text, flags=re.M)
    return [(parts[i].strip(), parts[i + 1]) for i in range(1, len(parts), 2)]


def table_flags(section):
    """The flags named in the first cell of each table row, and whether a row stands for the
    scenario flags."""
    flags, scenario = set(), False
    for line in section.splitlines():
        m = re.match(r"^\|((?:\\\||[^|])*)\|", line)  # a cell may hold escaped pipes: \|
        if not m:
            continue
        cell = m.group(1)
        if "(#scenario-flags)" in cell:
            scenario = True
        flags |= set(FLAG.findall(cell))
    return flags, scenario


def check_cli_reference(cli, root, problems):
    page = os.path.join("docs", "CLI.md")
    with open(os.path.join(root, page)) as f:
        text = f.read()
    top = help_text(cli)
    subs = subcommands(top)
    if not subs:
        problems.append("%s --help lists no subcommands" % cli)
    sections = page_sections(text)
    documented = {}
    scenario_flags = None
    for heading, body in sections:
        m = re.match(r"^`(\w[\w-]*)`$", heading)
        if m:
            documented[m.group(1)] = body
        elif heading == "Scenario flags":
            scenario_flags = table_flags(body)[0]
        elif heading == "Global options":
            documented[""] = body
    if scenario_flags is None:
        problems.append("%s has no '## Scenario flags' section" % page)
        scenario_flags = set()
    for sub in sorted(subs - set(documented)):
        problems.append("%s: subcommand %s has no '## `%s`' section" % (page, sub, sub))
    for sub in sorted(set(documented) - subs - {""}):
        problems.append("%s: section '## `%s`' names no subcommand of shardlens-cli" % (page, sub))
    every_flag = {"--help"}
    for sub in sorted((subs & set(documented)) | {""}):
        have = help_flags(help_text(cli, sub) if sub else top)
        every_flag |= have
        if sub not in documented:
            problems.append("%s has no '## Global options' section" % page)
            continue
        said, scenario = table_flags(documented[sub])
        if scenario:
            said |= scenario_flags
        said.discard("--help")
        name = "shardlens-cli %s" % sub if sub else "shardlens-cli"
        where = "## `%s`" % sub if sub else "## Global options"
        for flag in sorted(have - said):
            problems.append("%s: %s is in `%s --help` but not in %s" % (page, flag, name, where))
        for flag in sorted(said - have):
            problems.append("%s: %s in %s is not a flag of `%s` (see --help)" % (page, flag, where,
                                                                                 name))
    for flag in sorted(set(FLAG.findall(text)) - every_flag):
        problems.append("%s mentions %s, which no shardlens-cli command has" % (page, flag))
    return every_flag


def pages(root):
    docs = os.path.join(root, "docs")
    return ["README.md"] + sorted(os.path.join("docs", name) for name in os.listdir(docs)
                                  if name.endswith(".md"))


def check_commands(root, every_flag, problems):
    """Flags given to shardlens-cli in the shell blocks of every page."""
    for page in pages(root):
        with open(os.path.join(root, page)) as f:
            blocks = re.findall(r"^```(?:sh|bash|shell)\n(.*?)^```", f.read(), re.S | re.M)
        for block in blocks:
            command = False
            for line in block.splitlines():
                m = re.search(r"(?:\bshardlens-cli|^\$B) (.*)", line)
                if m:
                    command, line = True, m.group(1)
                if command:
                    for flag in sorted(set(FLAG.findall(line.split(" #")[0])) - every_flag):
                        problems.append("%s: shardlens-cli has no %s: %s" % (page, flag,
                                                                              line.strip()))
                command = command and line.rstrip().endswith("\\")


def slug(heading):
    """GitHub's anchor of a heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path):
    with open(path) as f:
        text = FENCE.sub("", f.read())
    seen, out = {}, set()
    for heading in re.findall(r"^#{1,6} (.*)$", text, re.M):
        s = slug(heading)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


def check_links(root, problems):
    for page in pages(root):
        with open(os.path.join(root, page)) as f:
            text = FENCE.sub("", f.read())
        text = re.sub(r"`[^`\n]*`", "", text)
        for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", text):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            path, _, fragment = target.partition("#")
            full = os.path.normpath(os.path.join(root, os.path.dirname(page), path)) if path \
                else os.path.join(root, page)
            if not os.path.exists(full):
                problems.append("%s: link %s: no file %s" % (page, target,
                                                             os.path.relpath(full, root)))
            elif fragment and full.endswith(".md") and fragment not in anchors(full):
                problems.append("%s: link %s: %s has no heading #%s" % (
                    page, target, os.path.relpath(full, root), fragment))


def check_script_paths(root, problems):
    for page in pages(root):
        with open(os.path.join(root, page)) as f:
            text = f.read()
        for path in sorted(set(re.findall(r"(?<![\w/.$~-])(scripts/[\w./-]*\.(?:sh|py))\b", text))):
            if not os.path.isfile(os.path.join(root, path)):
                problems.append("%s names %s, which is not a file" % (page, path))


TOP_FOLDERS = ("core", "ui", "app", "tests", "scripts", "integrations", "resources", "docs",
               "bench", "fuzz", "cmake", "packaging")
REPO_PATH = re.compile(r"^(?:\./)?((?:%s)/[^\s]*)$" % "|".join(TOP_FOLDERS))


def code_paths(text):
    """The repository paths written in the inline code spans of a page's prose."""
    text = FENCE.sub("", text)
    for span in re.findall(r"`([^`\n]+)`", text):
        for word in span.split():
            m = REPO_PATH.match(word.strip("(),;:'\""))
            if m and "..." not in m.group(1):
                yield m.group(1)


def check_code_paths(root, problems):
    for page in pages(root):
        with open(os.path.join(root, page)) as f:
            text = f.read()
        for path in sorted(set(code_paths(text))):
            pattern = re.sub(r"<[^<>/]*>", "*", path)
            if "*" in pattern:
                if not any(os.path.isfile(p) or os.path.isdir(p)
                           for p in glob.glob(os.path.join(root, pattern))):
                    problems.append("%s names %s, which matches no file" % (page, path))
            elif not os.path.exists(os.path.join(root, path)):
                problems.append("%s names %s, which is not in the tree" % (page, path))


def cli_lessons(cli):
    """{preset: title} as `shardlens-cli lessons` lists them: the name alone on a line, the
    title indented under it."""
    r = subprocess.run([cli, "lessons"], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        sys.exit("FAIL: %s lessons exited %d: %s" % (cli, r.returncode, r.stderr))
    lessons, lines = {}, r.stdout.splitlines()
    for line, following in zip(lines, lines[1:]):
        m = re.match(r"^([a-z0-9][a-z0-9-]*)$", line)
        if m and following.startswith("  "):
            lessons[m.group(1)] = following.strip()
    return lessons


def check_lessons(cli, root, problems):
    page = os.path.join("docs", "LESSONS.md")
    with open(os.path.join(root, page)) as f:
        text = FENCE.sub("", f.read())
    listed = cli_lessons(cli)
    if not listed:
        problems.append("%s lessons lists no presets" % cli)
    rows, in_table = {}, False
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")] \
            if line.startswith("|") else None
        if cells and cells[0] == "preset":
            in_table = True
        elif not cells:
            in_table = False
        elif in_table and not re.match(r"^:?-+:?$", cells[0]):
            name = cells[0].strip("`")
            if name in rows:
                problems.append("%s: preset %s has two rows" % (page, name))
            rows[name] = cells[1] if len(cells) > 1 else ""
    if not rows:
        problems.append("%s has no '| preset | ... |' table" % page)
    for name in sorted(set(listed) - set(rows)):
        problems.append("%s: preset %s (shardlens-cli lessons) has no row" % (page, name))
    for name in sorted(set(rows) - set(listed)):
        problems.append("%s: %s is not a preset of shardlens-cli lessons" % (page, name))
    for name in sorted(set(rows) & set(listed)):
        if rows[name] != listed[name]:
            problems.append("%s: preset %s reads %r, its title is %r" % (page, name, rows[name],
                                                                        listed[name]))


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    cli = os.path.abspath(sys.argv[1])
    root = sys.argv[2] if len(sys.argv) == 3 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "..")
    problems = []
    every_flag = check_cli_reference(cli, root, problems)
    check_commands(root, every_flag, problems)
    check_links(root, problems)
    check_script_paths(root, problems)
    check_code_paths(root, problems)
    check_lessons(cli, root, problems)
    for p in problems:
        print("FAIL:", p)
    if problems:
        sys.exit(1)
    print("docs/CLI.md names every subcommand and flag of %s, and only those; docs/LESSONS.md "
          "every preset with its title; every relative link, script and repository path of "
          "README.md and docs/*.md resolves" % os.path.basename(cli))


if __name__ == "__main__":
    main()
