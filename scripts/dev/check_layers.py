#!/usr/bin/env python3
"""Checks the layering of the source tree (docs/ARCHITECTURE.md): every #include of a
project header must point to the file's own layer or to one the layer depends on.
Exits 1 and lists each violation as FILE:LINE: LAYER includes HEADER (LAYER2)."""
import pathlib
import re
import sys

# Direct dependencies; the check closes them transitively.
DEPENDS = {
    "core/vocabulary": [],
    "core/io": ["core/vocabulary"],
    "core/dataset": ["core/vocabulary", "core/io"],
    "core/torchsem": ["core/vocabulary"],
    "core/diagnosis": ["core/vocabulary", "core/dataset", "core/torchsem"],
    "core/evaluation": ["core/vocabulary", "core/io", "core/dataset", "core/torchsem", "core/diagnosis"],
    "core/sim": ["core/evaluation"],
    "core/runfile": ["core/evaluation"],
    "core/platform": ["core/vocabulary"],
    "core/realrun": ["core/sim", "core/runfile", "core/platform"],
    "core/report": ["core/evaluation"],
    "core/cuda": ["core/vocabulary"],
    "core/torch": ["core/realrun", "core/cuda"],
    "ui/render": ["core/report", "core/realrun"],
    "ui": ["ui/render"],
    "app/cli": ["core/report", "core/realrun", "ui/render"],
    "app/gui": ["ui"],
}
# Headers anyone may include (generated: the build configuration, the dump format).
ANYWHERE = ("shardlens/config.h", "shardlens/dump_format.h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def closure(layer, seen=None):
    seen = set() if seen is None else seen
    for dep in DEPENDS[layer]:
        if dep not in seen:
            seen.add(dep)
            closure(dep, seen)
    return seen


def layer_of(path):
    best = None
    for layer in DEPENDS:
        if path == layer or path.startswith(layer + "/"):
            if best is None or len(layer) > len(best):
                best = layer
    return best


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    problems = []
    checked = 0
    for layer in DEPENDS:
        allowed = closure(layer) | {layer}
        for f in sorted((root / layer).rglob("*")):
            if f.suffix not in (".h", ".cpp", ".cu") or layer_of(str(f.relative_to(root).parent)) != layer:
                continue
            checked += 1
            for number, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if not m or m.group(1).startswith(ANYWHERE):
                    continue
                target = layer_of(str(pathlib.PurePosixPath(m.group(1)).parent))
                if target is None:
                    continue  # not a project header (e.g. a local "x.moc")
                if target not in allowed:
                    problems.append(f"{f.relative_to(root)}:{number}: {layer} includes "
                                    f"{m.group(1)} ({target})")
    for p in problems:
        print(p)
    print(f"checked {checked} files: {len(problems)} layering violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
