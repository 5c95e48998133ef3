"""The dump format, as dump_format.json (shipped in this package) describes it: its version,
its arrays and the keys of settings_json. The writer and the front ends take every name from
here, so a name the schema does not list is an error at once, not a dump the importer skips.
shardlens-cli's reader is generated from the same file (cmake/DumpFormat.cmake)."""
import json
import os

_SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dump_format.json")

with open(_SCHEMA_PATH, encoding="utf-8") as _f:
    SCHEMA = json.load(_f)

FORMAT_VERSION = SCHEMA["format_version"]
ARRAYS = {a["name"]: a for a in SCHEMA["arrays"]}
SETTINGS_KEYS = tuple(s["key"] for s in SCHEMA["settings"])
FLAG_BITS = {f["name"]: f["value"] for f in SCHEMA["flag_bits"]}


def new_settings(framework, **known):
    """settings_json of one dump: every key of the schema, null where unknown, `known` over
    it."""
    return update_settings(dict.fromkeys(SETTINGS_KEYS), framework=framework, **known)


def update_settings(settings, **known):
    """Sets keys of a settings dict, each checked against the schema: a key it does not list
    raises (a misspelt key would never be read)."""
    unknown = sorted(set(known) - set(SETTINGS_KEYS))
    if unknown:
        raise KeyError("not keys of dump_format.json's settings: %s" % unknown)
    settings.update(known)
    return settings


def versions():
    """The `versions` setting: the installed torch, lightning and torchmetrics, looked up once
    per process (importlib.metadata parses every distribution's METADATA file on each call, a
    few ms that every save() would pay otherwise)."""
    global _VERSIONS
    if _VERSIONS is None:
        _VERSIONS = _look_up_versions()
    return dict(_VERSIONS)


_VERSIONS = None


def _look_up_versions():
    out = {}
    try:
        import importlib.metadata as metadata
    except ImportError:  # pragma: no cover
        return out
    for package in ("torch", "lightning", "torchmetrics"):
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = None
    if out.get("lightning") is None:
        try:
            out["lightning"] = metadata.version("pytorch_lightning")
        except metadata.PackageNotFoundError:
            pass
    return out
