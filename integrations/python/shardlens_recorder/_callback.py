"""ShardLensCallback: the Lightning callback (records, metric watch, verdict)."""
import copy
import os

from . import _format, _labels, _logged, _outputs, _samplers, _tensors, _trainer, _verdict
from ._logged import LogWatch
from ._metrics import (CONFMAT_STATE_METRICS, KNOWN_METRICS, MATRIX_METRICS, MetricWatch,
                       dense_inputs, task_of)
from ._outputs import DEFAULT_KEYS, Unreadable
from ._recorder import ShardLensRecorder
from ._recording import Recording, initialized_dist
from ._sync import metric_sync
from ._tensors import ShardLensInputError


def _callback_base():
    """Lightning's Callback when Lightning is importable, else a plain base class, so that
    ShardLensCallback exists (and its hooks can be called) either way."""
    for module in ("lightning.pytorch", "pytorch_lightning"):
        try:
            return __import__(module, fromlist=["Callback"]).Callback, module
        except ImportError:
            continue
    return object, None


_CallbackBase, LIGHTNING = _callback_base()  # LIGHTNING: the module used, or None


def _print(line):
    print(line, flush=True)


class _Part:
    """One evaluation loader of one validation: its recorder, loader and sampler order."""

    def __init__(self, recorder, loader, sampler):
        self.recorder = recorder
        self.loader = loader
        self.sampler = sampler
        self.order = None  # replayed dataset indices, on the first batch that needs them
        self.stream = None  # the _Watched metric whose inputs this loader records
        self.failed = None  # why this part is not saved
        self.dataset = getattr(loader, "dataset", None)
        self.batches = []  # (first, end) record positions of each batch that ended
        # id(metric) -> [watched, every batch's inputs the stream's, batches seen]: a metric
        # whose inputs are the records (the stream, or one updated with the same tensors)
        self.mirrors = {}
        self.stream_batches = 0

    def mirror(self, metric):
        """The watched metric whose every update got exactly the records, or None."""
        m = self.mirrors.get(id(metric))
        return m[0] if m is not None and m[1] and m[2] == self.stream_batches else None


class ShardLensCallback(_CallbackBase):
    """A Lightning callback recording every validation/test batch; each rank saves one dump
    per evaluation: stage, sanity check, epoch, validation within the epoch and loader.

    ShardLensCallback("runs/") (a directory, or a ShardLensRecorder) on an unchanged module:
    during each evaluation the update() of every torchmetrics classification metric of the
    module (KNOWN_METRICS) is wrapped, and what the first confusion matrix (else the first
    metric) updated in a batch saw is recorded; that confusion matrix's synced compute() is
    the dump's reported matrix. Segmentation and multilabel metrics are read the same way:
    a multiclass metric (MulticlassJaccardIndex, MulticlassConfusionMatrix, ...) updated with
    [N, H, W] targets and [N, H, W] ids or [N, C, H, W] scores, or a Multilabel* metric, is
    recorded one record an image (item) with its cells, counted on the device with the
    metric's own ignore_index (ShardLensRecorder.add_dense / add_multilabel); a Jaccard
    index's (or a normalized confusion matrix's) reported matrix is its confmat state summed
    as its compute() syncs it. metrics=False, or keys= / batch_target=, reads
    validation_step's return value instead (below). verdict=True: after each validation (not
    the sanity check) rank 0 imports the ranks' dumps into {stem}.slrun with shardlens-cli
    (cli=, $SHARDLENS_CLI or PATH), diagnoses it, prints one line and logs shardlens/* to the
    Trainer's loggers; fail_on_wrong=True then raises ShardLensVerdictError on every rank
    when it is wrong.

    What validation_step (test_step) may return:
      - a dict: the prediction under "prediction", "preds", "pred", "logits", "probs",
        "y_hat" or "output"; the target under "target", "targets", "y", "label" or
        "labels"; the dataset index (optional) under "index", "indices" or "idx". Other
        names: keys={"prediction": "scores", "target": "gt", "index": "ids"}.
      - a tuple (preds, target) (torchmetrics' order) or (index, preds, target);
      - a tensor of predictions: the target is then the batch's "target"/... entry (a dict
        batch) or its last element (an (x, y) tuple), or batch_target(batch).
    Predictions: [N] ids, [N, C] logits/probabilities (argmax), [N] or [N, 1] binary scores
    (threshold, sigmoid first outside [0, 1], as torchmetrics). Without an index the callback
    replays the loader's sampler (the DistributedSampler or DistributedSamplerWrapper that
    Lightning injects, or a SequentialSampler), so no IndexedDataset is needed.
    Anything it cannot read is said once, on rank 0, as a ShardLensWarning; that loader's
    dump is then not written (never a dump that would read as exact) and fit goes on. A float
    dataset index, or a float target holding a value that is not a class id in the first
    batch, stops fit there (ShardLensInputError, naming the batch and the value); such a
    value in a later batch is found when the dump is written, which it then is not.

    Dumps: {name}[_test][_sanity]_epoch{e}[_val{v}][_dl{d}]_rank{r}, with settings_json (the
    sampler, seed, limits, ... of the loader in use). The first loader is recorded into
    `recorder` itself (set_reported in on_validation_epoch_end lands in its dump: the dump is
    written in on_validation_end, after the LightningModule's on_validation_epoch_end); loader
    d into recorders[d].

    stages: any of "validate" and "test". sanity: False skips the sanity check.

    labels: the true class of every dataset index, for the row check: one array (a sequence,
    tensor, ndarray or .npy path), used for every loader whose dataset has its length (another
    length is said once, naming the loader); one per loader: a list/tuple indexed by
    dataloader_idx or a dict {dataloader_idx: array}; or a dict by stage {"validate": ...,
    "test": ...} of either. Without it (or where it says nothing), the loader's dataset's own
    labels: a `targets`/`labels` attribute, a TensorDataset's last tensor of integers, a
    datasets.Dataset "label(s)" column, through Subset-like .dataset + .indices. They are
    written as an int64 .npy beside the dumps, {name}_labels_{val|test}_dl{d}_{hash}.npy (the
    hash of their content: another dataset never overwrites the file an earlier run file
    names), and imported as --dataset npy:FILE. Unknown, and some samples never evaluated: the
    line says the rows were not checked and shardlens/rows_wrong is not logged.
    """

    def __init__(self, recorder="shardlens_runs", stages=("validate", "test"), sanity=True,
                 keys=None, batch_target=None, threshold=None, metrics=None, verdict=True,
                 cli=None, fail_on_wrong=False, wait_timeout=120.0, labels=None):
        super().__init__()
        self._labels_of = {}  # stem of an evaluation's dumps -> its labels .npy
        self._run = Recording(self._global_rank, cli, verdict, fail_on_wrong, wait_timeout)
        # The true class counts: labels= (per loader and stage: _labels.pick), else the
        # loader's dataset's own labels (_labels.dataset_labels).
        self.labels = labels
        if isinstance(recorder, (str, bytes, os.PathLike)):  # ShardLensCallback("runs/")
            recorder = ShardLensRecorder(os.fspath(recorder))
        # What the module's torchmetrics metrics see is read unless told otherwise: metrics=
        # False, or keys= / batch_target= (which name what validation_step returns).
        if metrics is None:
            metrics = keys is None and batch_target is None
        self.metrics = metrics
        self._watch = None
        self._logs = None  # LogWatch of the evaluation under way
        self._logged = None  # what the last evaluation logged: (calls, summary, notes, ...)
        self.logged = []  # rank 0: each logged value whose true value the records proved
        unknown = set(stages) - {"validate", "test"}
        if unknown:
            raise ValueError("unknown stages: %s" % sorted(unknown))
        unknown = set(keys or {}) - set(DEFAULT_KEYS)
        if unknown:
            raise ValueError("unknown keys: %s (known: %s)" % (sorted(unknown),
                                                                sorted(DEFAULT_KEYS)))
        self.recorder = recorder
        self.stages = tuple(stages)
        self.sanity = sanity
        self.keys = dict(DEFAULT_KEYS)
        for role, names in (keys or {}).items():
            self.keys[role] = (names,) if isinstance(names, str) else tuple(names)
        self.batch_target = batch_target
        if threshold is not None:
            recorder.threshold = threshold
        self.recorders = {}  # dataloader_idx -> the recorder of that loader (last evaluation)
        self._own_sampler = recorder.sampler is not None  # else the loader's, per loader
        # What the user set stays; the rest is read from each loader in use.
        self._user_sizes = (recorder.dataset_size, recorder.batch_size)
        self._recording = False
        self._parts = {}
        self._validations = {}  # (stage, sanity, epoch) -> evaluations started
        self._trainer = None
        self._stage = None

    @property
    def labels(self):
        """labels= (see the class); set, it is checked and used from the next evaluation."""
        return self._labels

    @labels.setter
    def labels(self, labels):
        _labels.check_argument(labels)
        self._labels = labels
        self._run.forget_given_labels()

    @property
    def verdicts(self):
        """Rank 0: what each diagnosed evaluation said (the one judged in the background
        waited for)."""
        self._run.settle()
        return self._run.verdicts

    def _global_rank(self):
        return int(getattr(self._trainer, "global_rank", 0) or 0)

    def _say(self, key, message):
        self._run.say(key, message)

    # -- the loaders in use ----------------------------------------------------------------
    def _part(self, trainer, dataloader_idx):
        part = self._parts.get(dataloader_idx)
        if part is not None:
            return part
        main = self.recorder
        if dataloader_idx == 0:
            rec = main
        else:  # the same configuration, its own records
            rec = copy.copy(main)
            rec.reset()
        rec.dataloader_idx = dataloader_idx
        loader = _trainer.evaluation_loader(trainer, self._stage, dataloader_idx)
        sampler = main.sampler if self._own_sampler else _trainer.loader_sampler(loader)
        rec.sampler = sampler if sampler is not None and _samplers.is_distributed(sampler) \
            else None
        part = _Part(rec, loader, sampler)
        settings = _trainer.loader_settings(trainer, self._stage, rec, loader, sampler,
                                            dataloader_idx, self._user_sizes)
        rec.settings = settings
        rec.dataset_size = settings["dataset_size"]
        rec.batch_size = settings["batch_size"]
        self._parts[dataloader_idx] = part
        self.recorders[dataloader_idx] = rec
        return part

    # -- reading a batch -------------------------------------------------------------------
    def _indices(self, part, count):
        """Dataset indices of the next `count` records of this loader, from its sampler."""
        if part.order is None:
            part.order = _samplers.replay_order(part.sampler) if part.sampler is not None \
                else None
            if part.order is None:
                raise Unreadable(
                    "no dataset index: validation_step returns none and the loader's "
                    "sampler (%s) cannot be replayed; return the index (IndexedDataset, "
                    "keys={'index': ...})" % _samplers.kind_name(part.sampler))
        start = part.recorder.count
        if start + count > len(part.order):
            raise Unreadable("the loader yielded more samples (%d) than its sampler orders "
                              "(%d)" % (start + count, len(part.order)))
        return part.order[start:start + count]

    def _batch(self, trainer, outputs, batch, dataloader_idx):
        if not self._recording:
            return
        self._trainer = trainer
        d = dataloader_idx or 0
        try:
            part = self._part(trainer, d)
        except Exception as e:  # an unusual loader: say so, never stop the user's fit
            part = self._parts[d] = _Part(None, None, None)
            part.failed = "cannot read dataloader %d: %s" % (d, e)
            self._say(("part", str(e)), part.failed)
        start = part.recorder.count if part.recorder is not None else 0
        try:
            self._record_batch(part, outputs, batch, d)
        finally:  # which records the values logged in this batch's step describe
            part.batches.append((start, part.recorder.count if part.recorder is not None
                                 else start))

    def _record_batch(self, part, outputs, batch, dataloader_idx):
        d = dataloader_idx
        if part.failed:
            return
        try:
            if self._record_metric_inputs(part, d):
                return
            index, target, pred = _outputs.read_step(outputs, batch, self.keys,
                                                     self.batch_target)
            ids = _tensors.class_ids_lazy(pred, part.recorder.threshold)
            target = _tensors.flat(target)
            n = _tensors.length(target)
            if _tensors.length(ids) != n:
                raise Unreadable("%d predictions for %d targets (prediction shape %s)" % (
                    _tensors.length(ids), n,
                    list(getattr(pred, "shape", [_tensors.length(ids)]))))
            if index is None:
                index = self._indices(part, n)
            part.recorder.update(index, target, ids)
        except ShardLensInputError as e:  # the frameworks refuse it too: stop fit here
            part.failed = str(e)
            raise ShardLensInputError("ShardLens: %s (dataloader %d of this %s)" % (
                e, dataloader_idx or 0, self._stage)) from None
        except Exception as e:  # whatever it is, fit goes on and no dump says "exact"
            part.failed = str(e)
            self._say(("read", str(e)), "%s; dataloader %d of this %s is not recorded "
                      "(no dump is written for it)" % (e, dataloader_idx or 0, self._stage))

    def _record_metric_inputs(self, part, d):
        """Records what the module's metrics saw in this batch; False when none saw it (then
        the step's return value is read, the explicit way)."""
        pending = self._watch.take() if self._watch is not None else {}
        if not pending:
            return False
        for w in self._watch.watched:
            if w.name in pending:
                w.loader = d
        if part.stream is None:
            part.stream = self._watch.stream(pending)
            if part.stream is None:
                return False
        w = part.stream
        if w.failed:
            raise Unreadable(w.failed)
        if w.name not in pending:
            raise Unreadable("%s (%s) was not updated in a batch of dataloader %d" % (
                w.name, w.cls, d))
        part.stream_batches += 1
        for other in self._watch.watched:
            if other.name in pending and other.failed is None:
                m = part.mirrors.setdefault(id(other.metric), [other, True, 0])
                m[1] = m[1] and _logged.same_inputs(pending[other.name], pending[w.name])
                m[2] += 1
        rec = part.recorder
        if rec.num_classes is None and w.num_classes is not None:
            rec.num_classes = int(w.num_classes)
            if rec.settings is not None:
                _format.update_settings(rec.settings, num_classes=rec.num_classes)
        for target, ids in pending[w.name]:
            if not dense_inputs(w, target):
                rec.update(self._indices(part, _tensors.length(target)), target, ids)
                continue
            # Samples of many cells (pixels, tokens, labels): one record a sample, its cells
            # counted on the device with the metric's own ignore_index.
            index = self._indices(part, target.shape[0])
            if not rec.count and w.num_classes is not None:
                # the metric's own classes: a loader's recorder starts as a copy of the
                # first's, whose metric may count other classes
                rec.num_classes = int(w.num_classes)
            rec.ignore_index = w.ignore_index
            task = task_of(w, target)
            if task == "multilabel":
                rec.num_labels = int(w.metric.num_labels)
                rec.add_multilabel(index, target, ids)
            else:
                rec.add_dense(index, target, ids, task=task)
        return True

    def _metric_results(self):
        """The synced compute() of the confusion matrix a loader records (its stream): that
        loader's reported matrix. Every updated metric computes, on every rank in the same
        order, as the module's own compute() would (torchmetrics caches the result)."""
        if not self._recording or self._watch is None:
            return
        try:
            results = self._watch.results()
        except Exception as e:
            self._say(("compute", str(e)), "reading the metrics' compute() failed: %s; "
                      "the dumps hold no reported matrix" % e)
            return
        for w, value in results:
            part = self._parts.get(w.loader if w.loader is not None else 0)
            if part is None or part.recorder is None:
                continue
            if part.stream is w and (w.cls in MATRIX_METRICS or w.cls in CONFMAT_STATE_METRICS):
                # A Jaccard index computes a score, a normalized confusion matrix fractions:
                # their reported matrix is the confmat state summed as compute() syncs it
                counts = w.cls in MATRIX_METRICS and \
                    getattr(w.metric, "normalize", None) in (None, "none")
                part.recorder.set_reported(value if counts else self._watch.synced_confmat(w))
                if part.recorder.settings is not None:  # how compute() synced it
                    _format.update_settings(part.recorder.settings, sync=metric_sync(w.metric))

    # -- one evaluation --------------------------------------------------------------------
    def _start(self, trainer, stage, pl_module=None):
        self._trainer = trainer
        self._stage = stage
        sanity = bool(getattr(trainer, "sanity_checking", False))
        self._recording = stage in self.stages and (self.sanity or not sanity)
        self._parts = {}
        self._detach()
        if not self._recording:
            return
        if self._run.verdict and not sanity and callable(getattr(pl_module, "log", None)):
            try:  # what the module logs, compared with the records after the verdict
                self._logs = LogWatch(pl_module, trainer, lambda d: len(
                    self._parts[d].batches) if d in self._parts else 0)
            except Exception as e:
                self._say(("log-watch", str(e)), "cannot read what the module logs: %s" % e)
        if self.metrics and pl_module is not None:
            self._watch = MetricWatch()
            try:
                self._watch.attach(pl_module)
            except Exception as e:
                self._detach()
                self._say(("attach", str(e)), "cannot watch the module's metrics: %s" % e)
            for name, cls in (self._watch.unknown if self._watch else []):
                self._say(("unknown", name), "metric %s (%s) is not one ShardLens reads "
                          "(%s): it is not recorded" % (name, cls, ", ".join(
                              sorted(KNOWN_METRICS))))
        rec = self.recorder
        epoch = int(getattr(trainer, "current_epoch", 0) or 0)
        key = (stage, sanity, epoch)
        rec.reset(epoch=epoch)
        rec.validation = self._validations.get(key, 0)
        self._validations[key] = rec.validation + 1
        rec.sanity = sanity
        rec.stage = "test" if stage == "test" else None
        # Lightning knows the rank even before (or without) torch.distributed.
        if rec._rank is None and getattr(trainer, "global_rank", None) is not None:
            rec._rank = int(trainer.global_rank)
        if rec._world_size is None and getattr(trainer, "world_size", None) is not None:
            rec._world_size = int(trainer.world_size)

    def _detach(self):
        if self._logs is not None:
            self._logs.detach()  # the module's own log() back
            self._logs = None
        if self._watch is not None:
            for w in self._watch.watched:
                if w.failed:
                    self._say(("metric", w.name), "%s; not recorded" % w.failed)
            self._watch.detach()
            self._watch = None

    def _conclude(self, trainer, written):
        """Every rank: wait until all dumps are written; rank 0: import, diagnose, log and
        print; with fail_on_wrong every rank stops with rank 0's diagnosis."""
        if not self._run.verdict or written is None or getattr(trainer, "sanity_checking", False):
            return  # the sanity check's few batches are recorded, not judged
        dist = initialized_dist()
        summary = self._logged["summary"] if self._logged is not None else None
        summaries = [summary]
        if dist is not None:  # also the barrier: every rank's dump is in place after it
            summaries = [None] * dist.get_world_size()
            dist.all_gather_object(summaries, summary)
        failure = None
        if self._global_rank() == 0:
            bar = getattr(trainer, "progress_bar_callback", None)
            say_line = getattr(bar, "print", None)
            world = int(getattr(trainer, "world_size", 1) or 1)
            # What the verdict reads of the Trainer is read now: training goes on meanwhile.
            step = int(getattr(trainer, "global_step", 0) or 0)
            logged = self._logged_values(trainer, summaries)
            labels = dict(self._labels_of)
            if self._run.fail_on_wrong:  # every rank waits for the diagnosis to stop on
                failure = self._run.judge(written, world, dist is None, labels.get, say_line,
                                          lambda v: self._log(trainer, v, step))
                self._compare_logged(trainer, summaries, world, logged, step, say_line)
            else:
                def judge(deliver):
                    self._run.judge(written, world, dist is None, labels.get,
                                    lambda line: deliver(say_line or _print, line),
                                    lambda v: deliver(self._log, trainer, v, step))
                    self._compare_logged(trainer, summaries, world, logged, step,
                                         lambda line: deliver(say_line or _print, line), deliver)
                self._run.in_background(judge)
        self._run.stop_on_failure(failure)

    def _log(self, trainer, v, step):
        """The verdict through the Trainer's loggers (TensorBoard, CSV, W&B, ...), at the step
        of the evaluation it judges."""
        scalars = _verdict.scalars(v)
        text = ", ".join(v["patterns"]) or "none"
        for logger in getattr(trainer, "loggers", None) or []:
            try:
                logger.log_metrics(scalars, step=step)
                experiment = getattr(logger, "experiment", None)
                if hasattr(experiment, "add_text"):
                    experiment.add_text("shardlens/patterns", text, step)
                image = _verdict.heatmap_of(v) if hasattr(experiment, "add_image") else None
                if image is not None:
                    experiment.add_image("shardlens/synced_minus_expected", image, step,
                                         dataformats="HWC")
            except Exception as e:
                self._say(("log", type(logger).__name__),
                          "cannot log the verdict to %s: %s" % (type(logger).__name__, e))

    def _logged_summary(self, calls, metrics):
        """What this rank's records prove of each value logged (_logged.local_summary), the
        notes for values nothing recorded describes, and the dumps' stem of each loader."""
        try:
            stems = {d: p.recorder.path("npz").rsplit("_rank", 1)[0]
                     for d, p in self._parts.items() if p.recorder is not None}
            # Values logged over samples of many cells are not compared: the records'
            # target and prediction are each sample's dominant classes, not its counts.
            parts = {d: p for d, p in self._parts.items()
                     if p.recorder is None or p.recorder._cells is None}
            return {"summary": _logged.local_summary(calls, parts), "metrics": metrics,
                    "notes": _logged.unrecorded_notes(calls, parts), "stems": stems}
        except Exception as e:  # a value that cannot be read: no claim about it
            self._say(("logged", str(e)), "cannot compare the values logged: %s" % e)
            return None

    def _logged_values(self, trainer, summaries):
        """What the Trainer logged of the values the records may prove, read at the
        evaluation's end (callback_metrics moves on with training)."""
        if self._logged is None or any(s is None for s in summaries):
            return {}
        try:
            got = getattr(trainer, "callback_metrics", None) or {}
            return {k: float(v) for k, v in got.items() if k in summaries[0]}
        except Exception as e:
            self._say(("logged", str(e)), "cannot compare the values logged: %s" % e)
            return {}

    def _compare_logged(self, trainer, summaries, world, logged, step, say_line,
                        deliver=lambda function, *args: function(*args)):
        """Rank 0: each value logged whose true value the records prove, printed where it
        differs and logged as shardlens/true_<name>; the notes of values nothing recorded.
        logged: _logged_values; deliver: how the loggers are called (from a background
        verdict, on the Trainer's thread later)."""
        own = self._logged
        if own is None:
            return
        for key, note in own["notes"]:
            self._say(("logged-unrecorded", key), note)
        if len(summaries) != world or any(s is None for s in summaries):
            return
        wanted = {s["loader"] for s in summaries[0].values() if s["match"]}
        if not wanted:
            return
        try:
            records = {d: _logged.load_records(own["stems"][d], world) for d in wanted
                       if d in own["stems"]}
            found = _logged.true_values(summaries, logged, records, own["metrics"])
        except Exception as e:
            self._say(("logged", str(e)), "cannot compare the values logged: %s" % e)
            return
        for f in found:
            self.logged.append(f)
            if _logged.differs(f):
                (say_line or _print)(_logged.line(f))
        if found:
            deliver(self._log_scalars, trainer, _logged.scalars(found), step)

    def _log_scalars(self, trainer, scalars, step):
        for logger in getattr(trainer, "loggers", None) or []:
            try:
                logger.log_metrics(scalars, step=step)
            except Exception as e:
                self._say(("log", type(logger).__name__),
                          "cannot log to %s: %s" % (type(logger).__name__, e))

    def _labels_path(self, part, d):
        """Rank 0: the int64 .npy of this loader's dataset labels beside its dumps (labels=,
        else the dataset's own), named by content so that no later evaluation overwrites it,
        or None when they are not known exactly."""
        rec = part.recorder
        return self._run.labels_for(self.labels, part.dataset, rec.dataset_size, rec.out_dir,
                                    "%s_labels" % rec.name, self._stage, d)

    def _end(self):
        logs = self._logs
        metrics = {w.name: w for w in self._watch.watched} if self._watch is not None else {}
        self._detach()
        self._logs, self._logged = None, None
        if not self._recording:
            return None
        self._recording = False
        written = []
        try:
            for d, part in sorted(self._parts.items()):
                rec = part.recorder
                if part.failed:
                    continue
                if not rec.count:
                    self._say(("empty", d), "dataloader %d recorded no samples: no dump" % d)
                    continue
                try:
                    paths = rec.save()
                    written += paths
                    if self._run.verdict and self._global_rank() == 0:
                        # a sample of many cells has no one label: its class counts are
                        # the cells of its first record
                        labels = self._labels_path(part, d) if rec._cells is None else None
                        for path in paths:
                            self._labels_of[path.rsplit("_rank", 1)[0]] = labels
                except Exception as e:  # a full disk, a read-only directory, a target that
                    # was not a class id after the first batch: fit goes on, no dump
                    partial = [rec.path(f) for f in rec.formats if os.path.exists(rec.path(f))]
                    for path in partial:  # one format written, the other not: neither
                        os.unlink(path)
                    self._say(("save", d), "cannot write the dump of dataloader %d (%s): %s; "
                              "this evaluation is not recorded" % (d, rec.path(rec.formats[0]), e))
            if not self._parts:
                self._say("nothing", "no %s batch reached the callback: no dump" % self._stage)
            if logs is not None:
                self._logged = self._logged_summary(logs.calls, metrics)
        finally:
            main = self.recorder
            main.sanity = False
            main.stage = None
            main.dataloader_idx = 0
            main.validation = 0
            main.settings = None
            main.dataset_size, main.batch_size = self._user_sizes
            if not self._own_sampler:
                main.sampler = None
            self._parts = {}
        return written

    # Lightning 2.x hook signatures (lightning.pytorch.Callback).
    def on_validation_epoch_start(self, trainer, pl_module):
        self._run.settle()  # the previous verdict first: verdicts come in order
        self._start(trainer, "validate", pl_module)

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
        self._run.poll()  # the last validation's verdict, once it is judged

    def teardown(self, trainer, pl_module, stage):
        self._run.settle()  # fit, validate or test ends with every verdict delivered

    def on_validation_epoch_end(self, trainer, pl_module):
        # Callbacks' hooks run before the LightningModule's: its metrics still hold the
        # evaluation's state here, before the module's own compute() and reset().
        self._metric_results()

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                                dataloader_idx=0):
        self._batch(trainer, outputs, batch, dataloader_idx)

    def on_validation_end(self, trainer, pl_module):
        self._conclude(trainer, self._end())

    def on_test_epoch_start(self, trainer, pl_module):
        self._run.settle()
        self._start(trainer, "test", pl_module)

    def on_test_epoch_end(self, trainer, pl_module):
        self._metric_results()

    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                          dataloader_idx=0):
        self._batch(trainer, outputs, batch, dataloader_idx)

    def on_test_end(self, trainer, pl_module):
        self._conclude(trainer, self._end())

    def on_exception(self, trainer, pl_module, exception):
        self._detach()  # the metrics get their own update() back
        self._run.settle()
