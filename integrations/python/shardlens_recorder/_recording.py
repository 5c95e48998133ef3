"""What every framework front end (the Lightning callback, Accelerate's watch) shares around
its recorders: saying what it could not record once on rank 0, the dataset labels written
beside the dumps, and the verdict after each evaluation (rank 0 imports and diagnoses, every
rank stops with fail_on_wrong)."""
import os
import warnings

from . import _verdict
from ._recorder import ShardLensWarning


class ShardLensVerdictError(RuntimeError):
    """fail_on_wrong=True: the diagnosis of a validation whose reported matrix is wrong."""


def initialized_dist():
    """torch.distributed when a process group is up, else None."""
    try:
        import torch.distributed as dist
    except ImportError:
        return None
    return dist if dist.is_available() and dist.is_initialized() else None


class Recording:
    """One front end's run: rank(): this process's rank, read when needed (Lightning knows
    it only once fit has started)."""

    def __init__(self, rank, cli=None, verdict=True, fail_on_wrong=False, wait_timeout=120.0):
        self.rank = rank
        self.cli = cli
        self.verdict = verdict  # rank 0 imports and diagnoses each evaluation's dumps
        self.fail_on_wrong = fail_on_wrong
        self.wait_timeout = wait_timeout
        self.verdicts = []  # rank 0: what each diagnosed evaluation said
        self._said = set()
        self._labels_files = {}  # key -> the int64 .npy written beside the dumps, or ""

    def say(self, key, message):
        """A ShardLensWarning, once per key, on rank 0 only."""
        if key in self._said:
            return
        self._said.add(key)
        if self.rank() == 0:
            warnings.warn("ShardLens: " + message, ShardLensWarning, stacklevel=4)

    def labels_file(self, key, labels, size, path, given, where=""):
        """Rank 0: the int64 .npy of the dataset's labels at path (written once per key), or
        None when they are not known exactly. given: the user passed labels= (said when they
        are not one class id per index); where: which loader, for that message."""
        if key not in self._labels_files:
            written = None
            if labels is not None:
                try:
                    written = _verdict.labels_file(labels, size, path)
                except Exception as e:
                    self.say(("labels", str(e)), "cannot write the dataset labels: %s" % e)
            if written is None and given:
                self.say(("labels", where), "labels= is not one integer class id per dataset "
                         "index%s (%s samples): its rows are not checked" % (where, size))
            self._labels_files[key] = written or ""
        return self._labels_files[key] or None

    def judge(self, written, world, poll, labels_of, say_line=None, log=None):
        """Rank 0, once every rank has written: one verdict per evaluation written (from the
        .npz when both formats are), printed through say_line and given to log. poll: wait
        up to wait_timeout for the other ranks' dumps (no barrier without torch.distributed).
        Returns the lines of the wrong ones, or None; never raises."""
        try:
            cli = _verdict.find_cli(self.cli)
            if cli is None:
                self.say("cli", "shardlens-cli not found (cli=, $SHARDLENS_CLI or PATH): the "
                         "dumps are written, no verdict is printed or logged")
                return None
            failures = []
            for path in written:
                if not path.endswith(".npz") and path[:-3] + ".npz" in written:
                    continue
                stem, ext = path.rsplit("_rank", 1)[0], os.path.splitext(path)[1]
                files = ["%s_rank%d%s" % (stem, r, ext) for r in range(world)]
                missing = _verdict.wait_for(files, self.wait_timeout if poll else 0)
                if missing:
                    self.say(("missing", stem), "no verdict for %s: no dump from %s" % (
                        os.path.basename(stem), ", ".join(os.path.basename(m) for m in missing)))
                    continue
                v = _verdict.judge(cli, files, stem + ".slrun", say_line, labels_of(stem))
                self.verdicts.append(v)
                if log is not None:
                    log(v)
                if not (v["correct"] and not v["patterns"]):
                    failures.append(v["line"])
            return "\n".join(failures) or None
        except Exception as e:  # the verdict is a service: it never stops fit itself
            self.say(("verdict", str(e)), "no verdict: %s" % e)
            return None

    def stop_on_failure(self, failure):
        """fail_on_wrong: every rank raises rank 0's diagnosis (broadcast when distributed)."""
        if not self.fail_on_wrong:
            return
        dist = initialized_dist()
        if dist is not None:
            box = [failure]
            dist.broadcast_object_list(box, src=0)
            failure = box[0]
        if failure:
            raise ShardLensVerdictError(failure)
