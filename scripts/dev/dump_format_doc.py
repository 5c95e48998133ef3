#!/usr/bin/env python3
"""Renders docs/FORMATS.md from the dump format's schema,
integrations/python/shardlens_recorder/dump_format.json (the one description the recorder's
writer and shardlens-cli's reader are both made from).

Usage: scripts/dev/dump_format_doc.py            writes docs/FORMATS.md
       scripts/dev/dump_format_doc.py --check    exits 1 when docs/FORMATS.md is not the rendering
"""
import json
import os
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
SCHEMA = os.path.join(ROOT, "integrations", "python", "shardlens_recorder", "dump_format.json")
DOC = os.path.join(ROOT, "docs", "FORMATS.md")

SHAPES = {"scalar": "one number", "records": "[N]", "records or scores": "[N] or [N, C]",
          "scalar or records": "one number or [N]", "matrix": "[C, C]",
          "sparse": "[K, 3]", "bytes": "[bytes]", "cells": "[M]"}


def cell(text):
    return str(text).replace("|", "\\|")


def codes(names):
    return ", ".join("`%s`" % n for n in names) or "—"


def render(schema):
    out = ["# The dump format", "",
           "<!-- Rendered from integrations/python/shardlens_recorder/dump_format.json by "
           "scripts/dev/dump_format_doc.py; edit the JSON, then run the script "
           "(a test checks). -->",
           "", schema["about"], "",
           "Format `%s`, version **%d**. A dump records its version in `format_version`; "
           "`shardlens-cli import` refuses a newer one, naming both versions. Run files "
           "(`.slrun`) carry their own `format_version` in `meta.json` "
           "(core/runfile/runfile.h)." % (schema["format"], schema["format_version"]), "",
           "## Containers", "", "| container | what it is |", "| --- | --- |"]
    out += ["| `%s` | %s |" % (k, cell(v)) for k, v in schema["containers"].items()]
    out += ["", "## Flag bits (`flags`)", "", "| bit | name | meaning |", "| --- | --- | --- |"]
    out += ["| %d | `%s` | %s |" % (f["value"], f["name"], cell(f["meaning"]))
            for f in schema["flag_bits"]]
    out += ["", "## Arrays", "",
            "N records, C classes, M cells (the sum of cells_per_record). Presence: *required* (a dump without it is refused), "
            "*always* (the recorder always writes it; optional to a reader), *when set* / *when "
            "known*.", "",
            "| array | also read as | dtype | shape | presence | containers | meaning |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    out += ["| `%s` | %s | %s | %s | %s | %s | %s |" % (
        a["name"], codes(a["aliases"]), a["dtype"], SHAPES[a["shape"]], a["presence"],
        ", ".join(a["containers"]), cell(a["meaning"])) for a in schema["arrays"]]
    out += ["", "## settings_json keys", "",
            "Every key is written, `null` where unknown; a reader keeps keys it does not know. "
            "Types: string, bool, int (at least *minimum* where one is given), versions (an "
            "object of version strings).", "",
            "| key | type | minimum | written by | read by | meaning |",
            "| --- | --- | --- | --- | --- | --- |"]
    out += ["| `%s` | %s | %s | %s | %s | %s |" % (
        s["key"], s["type"], s.get("minimum", "—"), ", ".join(s["written_by"]),
        cell(s["read_by"]), cell(s["meaning"])) for s in schema["settings"]]
    return "\n".join(out) + "\n"


def main():
    with open(SCHEMA, encoding="utf-8") as f:
        text = render(json.load(f))
    if sys.argv[1:] == ["--check"]:
        with open(DOC, encoding="utf-8") as f:
            if f.read() != text:
                print("%s is not the rendering of %s: run scripts/dev/dump_format_doc.py"
                      % (DOC, SCHEMA))
                return 1
        return 0
    with open(DOC, "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
