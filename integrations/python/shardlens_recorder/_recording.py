"""What every framework front end (the Lightning callback, Accelerate's watch) shares around
its recorders: saying what it could not record once on rank 0, the dataset labels written
beside the dumps, and the verdict after each evaluation (rank 0 imports and diagnoses, every
rank stops with fail_on_wrong)."""
import atexit
import os
import threading
import warnings

from . import _labels, _verdict
from ._recorder import ShardLensWarning


def _length(x):
    try:
        return len(x) if not isinstance(x, (str, bytes, os.PathLike)) else None
    except TypeError:
        return None


def _same(a, b):
    import numpy as np
    return a.shape == b.shape and bool(np.array_equal(a, b))


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
        self._given_arrays = {}  # (stage, loader, size) -> (labels=, per loader) or None
        self._own_labels = {}  # id(dataset) -> (weak reference, its own labels or None)
        # The verdict judged on a thread while the evaluation's caller goes on (the import
        # and diagnosis take a CPU core for about 0.15 s at 1000 classes, 100,000 samples):
        # (thread, [(function, args)] it left for this thread to run), or None.
        self._background = None
        self._delivering = threading.Lock()
        atexit.register(self.settle)  # a script that ends right after its last evaluation

    def in_background(self, work):
        """Runs work(deliver) on a thread, after the previous one is settled (verdicts stay in
        order). deliver(function, *args) leaves a call (a line to print, values to log) for
        the caller's thread: settle() and poll() run them, so loggers and progress bars are
        only ever called from it. fail_on_wrong judges inline instead (every rank waits)."""
        self.settle()
        left = []

        def run():
            try:
                work(lambda function, *args: left.append((function, args)))
            except Exception as e:  # the verdict is a service: it never stops the run
                left.append((self.say, (("verdict", str(e)), "no verdict: %s" % e)))

        thread = threading.Thread(target=run, name="shardlens-verdict")
        thread.start()
        self._background = (thread, left)

    def poll(self):
        """Delivers the background verdict if it is done; never waits."""
        if self._background is not None and not self._background[0].is_alive():
            self.settle()

    def settle(self):
        """Waits for the background verdict and runs what it left (prints, logs)."""
        with self._delivering:
            background, self._background = self._background, None
        if background is None:
            return
        thread, left = background
        thread.join()
        for function, args in left:
            try:
                function(*args)
            except Exception as e:
                self.say(("deliver", str(e)), "cannot deliver the verdict: %s" % e)

    def say(self, key, message):
        """A ShardLensWarning, once per key, on rank 0 only."""
        if key in self._said:
            return
        self._said.add(key)
        if self.rank() == 0:
            warnings.warn("ShardLens: " + message, ShardLensWarning, stacklevel=4)

    def labels_for(self, given, dataset, size, out_dir, prefix, stage="validate", loader=0):
        """Rank 0: the int64 .npy of one evaluation's labels beside its dumps, named by their
        content ({prefix}_val|test_dl{loader}_{hash}.npy, written once), or None when they are
        not known exactly. given: labels= as passed (_labels.pick reads it); dataset: the
        loader's dataset, whose own targets are read when labels= says nothing for it."""
        where = "%s dataloader %d" % (stage, loader)
        arr = self._given(given, stage, loader, size, where)
        if arr is not None and arr[1]:  # given for this very loader
            arr = arr[0]
        else:
            own = self._own(dataset)
            if arr is not None and own is not None and not _same(arr[0], own):
                # one array for every loader, and the dataset knows better
                self.say(("labels", "own", where), "labels= differs from the labels of the "
                         "%s's dataset: the dataset's own are used for it" % where)
                arr = None
            arr = arr[0] if arr is not None else own
        if arr is None:
            return None
        try:
            return _labels.content_file(arr, out_dir, "%s_%s_dl%d" % (
                prefix, "val" if stage == "validate" else stage, loader))
        except Exception as e:
            self.say(("labels", str(e)), "cannot write the dataset labels: %s" % e)
            return None

    def forget_given_labels(self):
        """labels= changed: read it again at the next evaluation."""
        self._given_arrays = {}

    def _given(self, given, stage, loader, size, where):
        """(int64 labels, per_loader) of what labels= says for this loader, or None."""
        key = (stage, loader, size)
        if key not in self._given_arrays:
            labels, per_loader = _labels.pick(given, stage, loader)
            arr = _labels.labels_array(labels, size) if labels is not None else None
            if labels is not None and arr is None:
                n = _length(labels)
                if per_loader or n is None or size is None or n == size:
                    self.say(("labels", where), "labels= for the %s is not one integer class "
                             "id per dataset index (%s samples): not used" % (where, size))
                else:
                    self.say(("labels", where), "labels= holds %d labels, %s's dataset %s "
                             "samples: not used for it (labels= takes one array per loader: a "
                             "list, or a dict by dataloader_idx)" % (n, where, size))
            self._given_arrays[key] = (arr, per_loader) if arr is not None else None
        return self._given_arrays[key]

    def _own(self, dataset):
        """The dataset's own labels (_labels.dataset_labels), read once per dataset object."""
        if dataset is None:
            return None
        import weakref
        held = self._own_labels.get(id(dataset))
        if held is not None and held[0]() is dataset:
            return held[1]
        arr = _labels.dataset_labels(dataset)
        try:
            self._own_labels[id(dataset)] = (weakref.ref(dataset), arr)
        except TypeError:  # not weakly referable: read again next time
            pass
        return arr

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
