"""The Hugging Face Trainer: `watch(trainer, "runs/")` (or
`Trainer(callbacks=[ShardLensTrainerCallback("runs/")])`) records Trainer.evaluate and
Trainer.predict on every rank.

The Trainer's evaluation loop runs on trainer.accelerator: each step prediction_step gives
the rank's own (loss, logits, labels), then trainer.gather_function (the accelerator's
gather_for_metrics) gathers the loss, the logits and the labels in turn, each padded across
processes on dim 1 first. The watch wraps the three: the rank's own batch is recorded before
it is gathered, the gathered logits and labels are what compute_metrics (or predict) sees, the
reported matrix, and each loop's end writes the dumps and gives the verdict (Accelerate's
watch: _accelerate.py, whose loader replay and verdict this reuses).

Which dataset item a rank's row is, replayed from the prepared loader:
- a map-style dataset: the SequentialSampler's order as BatchSamplerShard deals it, its
  even_batches padding (cycled from the start) flagged, as watch(accelerator) does;
- an IterableDataset dispatched by rank 0 (DataLoaderDispatcher, Accelerate's default for
  one): the k-th item the dataset yields is index k; rank 0 reads num_processes batches a
  step and slices them; a last round that does not split evenly is completed with the first
  items, flagged, and gather_for_metrics trims them (the loader's remainder);
- an IterableDataset sharded on every rank (accelerator_config={"dispatch_batches": False}:
  IterableDatasetShard): the last round is completed by cycling the first round, flagged, and
  gather_for_metrics, which knows no length, returns those copies to the metric.

Token classification (logits [B, T, C], labels [B, T] with -100 on the tokens not scored):
each sequence is one record whose cells are its non-ignored (label, argmax) tokens
(_tokens.py). The Trainer pads logits and labels across processes on dim 1 with -100 before
each gather (its loop's pad_across_processes), and its EvalLoopContainer pads the steps to
one length with -100 again: the reported matrix, of what compute_metrics is given, leaves
those tokens out as it leaves the collator's padding out. A sequence the last round repeats
is a record again, flagged, and its tokens count again wherever the gather returned it.
"""
import functools

from . import _format, _samplers, _tensors, _tokens
from ._accelerate import _AccelerateWatch
from ._outputs import Unreadable
from ._tensors import ShardLensInputError

PADDING = _samplers.PADDING


def watch_trainer(trainer, out_dir="shardlens_runs", name="eval", cli=None,
                  fail_on_wrong=False, verdict=True, num_classes=None, labels=None,
                  ignore_index=_tokens.IGNORE_INDEX):
    """Records every Trainer.evaluate / Trainer.predict of `trainer` from now on (what
    shardlens_recorder.watch(trainer, ...) does). Returns the watch (its `verdicts`).
    ignore_index: the label of the tokens a token-classification evaluation leaves out."""
    return _TrainerWatch(trainer, out_dir, name, cli, fail_on_wrong, verdict, labels,
                         num_classes, ignore_index)


def is_trainer(obj):
    """A transformers Trainer (anything with the evaluation loop this module wraps), told
    without importing transformers."""
    return all(hasattr(obj, a) for a in ("accelerator", "evaluation_loop", "prediction_step"))


class _CountingIterable:
    """The user's IterableDataset as IterableDatasetShard reads it, counting the items it
    yields: every rank reads the whole stream, so the count at the end is its length."""

    def __init__(self, dataset):
        self.dataset = dataset
        self.count = 0

    def __iter__(self):
        self.count = 0
        for item in self.dataset:
            self.count += 1
            yield item

    def __getattr__(self, attr):  # set_epoch, generator and the rest: the dataset's own
        return getattr(self.dataset, attr)


class _StreamOrder:
    """Replays which stream position (dataset index) each row of a rank's batch is, for an
    IterableDataset under Accelerate, and whether it is a padding copy."""

    def __init__(self, dispatched, rank, world, batch_size, counter=None):
        self.dispatched, self.rank, self.world, self.b = dispatched, rank, world, batch_size
        self.counter = counter
        self.size = None  # the stream's length, known at the last step

    def rows(self, step, n, last, remainder):
        """(indices, flags) of the n rows of this rank at `step`; last: the loader's last
        step; remainder: what the loader says its last round held (dispatched only)."""
        start = step * self.world * self.b
        if not last:
            width = self.b
            return [start + self.rank * width + k for k in range(n)], [0] * n
        if self.dispatched:
            # rank 0 concatenated the round (m items); when m does not split evenly it
            # appended the first num_processes items and every rank took ceil(m / W).
            m = remainder
            width = -(-m // self.world)
            cycle = self.world
        else:
            if self.counter is None:
                raise Unreadable("the stream's length is unknown (its items were read in "
                                  "dataloader workers): the padding copies cannot be told")
            m = self.counter.count - start
            width = self.b
            cycle = self.world * self.b if step > 0 else m  # the first full round, or itself
        self.size = start + m
        index, flags = [], []
        for k in range(n):
            p = self.rank * width + k
            if p < m:
                index.append(start + p)
                flags.append(0)
            else:  # a copy of the stream's first items
                index.append((p - m) % cycle)
                flags.append(PADDING)
        return index, flags


def _stream_settings(dispatched):
    """What `simulate --like` reads of an IterableDataset's loader. Dispatched: Accelerate's
    DataLoaderDispatcher, which the simulation names and does not model. Sharded: every rank
    deals the stream's rounds as BatchSamplerShard deals a sequential map-style loader with
    even_batches (the last round completed from the first items), and gather_for_metrics,
    with no length to trim by, is a plain gather."""
    if dispatched:
        return {"accelerate_input": "iterable-dispatch", "inner_sampler": "sequential",
                "shuffle": False, "split_batches": False, "loader_drop_last": False}
    return {"accelerate_input": "loader", "inner_sampler": "sequential", "shuffle": False,
            "even_batches": True, "split_batches": False, "loader_drop_last": False,
            "sync": "gather"}


class _TrainerWatch(_AccelerateWatch):
    def __init__(self, trainer, out_dir, name, cli, fail_on_wrong, verdict, labels,
                 num_classes, ignore_index=_tokens.IGNORE_INDEX):
        super().__init__(trainer.accelerator, out_dir, name, cli, fail_on_wrong, verdict,
                         labels, num_classes, ignore_index=ignore_index)
        self.trainer = trainer
        self._counts = {}  # stage -> evaluations recorded (the dump's epoch)
        self._loop = None  # the evaluation loop under way: its stage and dataset
        self._roles = []  # what the step's next gathers carry, in the loop's order
        self._own = None  # this rank's (logits, labels) of the step, before the gathers
        self._said_unlabelled = False
        self.install()

    # -- what is wrapped -------------------------------------------------------------------
    def install(self):
        """Wraps the trainer's evaluation_loop and prediction_step and the accelerator's
        gather (the trainer keeps its own reference: gather_function, a partial with
        use_gather_object where Accelerate takes it, set again after each loop)."""
        t = self.trainer
        if getattr(t, "_shardlens_watch", None) is not None:
            raise RuntimeError("this Trainer is already watched by ShardLens")
        t._shardlens_watch = self
        t.accelerator.gather_for_metrics = self
        gather = getattr(t, "gather_function", None)
        keywords = getattr(gather, "keywords", None) if isinstance(
            gather, functools.partial) else None
        t.gather_function = functools.partial(self, **keywords) if keywords else self
        loop, step = t.evaluation_loop, t.prediction_step

        @functools.wraps(loop)
        def evaluation_loop(dataloader, description, *args, **kwargs):
            return self._evaluation_loop(loop, dataloader, description, *args, **kwargs)

        @functools.wraps(step)
        def prediction_step(model, inputs, prediction_loss_only, *args, **kwargs):
            out = step(model, inputs, prediction_loss_only, *args, **kwargs)
            self._step_output(out)
            return out

        t.evaluation_loop, t.prediction_step = evaluation_loop, prediction_step

    def _evaluation_loop(self, loop, dataloader, description, *args, **kwargs):
        stage = "test" if description == "Prediction" else "validate"
        dataset = getattr(dataloader, "dataset", None)
        shard = dataset if _samplers.kind_name(dataset) == "IterableDatasetShard" else None
        counter = None
        if shard is not None:  # count the stream its items come from
            counter = _CountingIterable(shard.dataset)
            shard.dataset, dataset = counter, shard.dataset
        self._loop = {"stage": stage, "dataset": dataset, "shard": shard, "counter": counter,
                      "dispatched": _samplers.kind_name(dataloader) == "DataLoaderDispatcher"}
        self._roles, self._own, self._loader, self._steps = [], None, None, 0
        try:
            out = loop(dataloader, description, *args, **kwargs)
        finally:
            if shard is not None:
                shard.dataset = counter.dataset
        if self._loader is not None:  # something was recorded: dumps and the verdict
            self._finish()
        elif self._steps and self._own is not None and self._own[0] is None:
            self._run.say(("no logits", stage), "Trainer.%s gathered no predictions (no "
                          "compute_metrics, or prediction_loss_only): nothing recorded" % (
                              "predict" if stage == "test" else "evaluate"))
        self._loop = None
        return out

    def _step_output(self, out):
        """The step's (loss, logits, labels): the gathers that follow, in the loop's order."""
        if self._loop is None:
            return
        loss, logits, labels = out
        self._steps += 1
        args = self.trainer.args
        self._roles = [role for role, present in (
            ("loss", loss is not None),
            ("inputs", "inputs" in (getattr(args, "include_for_metrics", None) or ())),
            ("logits", logits is not None), ("labels", labels is not None)) if present]
        self._own = (logits, labels)
        if logits is not None and labels is None and not self._said_unlabelled:
            self._said_unlabelled = True
            self._run.say("unlabelled", "the evaluated batches hold no labels: nothing to "
                          "check, this evaluation is not recorded")

    # -- one gather ------------------------------------------------------------------------
    def __call__(self, input_data, *args, **kwargs):
        self._run.poll()  # the last evaluation's verdict, once judged
        role = self._roles.pop(0) if self._loop is not None and self._roles else None
        out = self.original(input_data, *args, **kwargs)
        if role == "logits":
            self._gathered_logits = out
        elif role == "labels" and self._own[0] is not None:
            self._record_step(out)
        return out

    def _record_step(self, gathered_labels):
        logits, labels = self._own
        try:
            self._record_rows(logits, labels)
        except ShardLensInputError as e:  # the frameworks refuse it too: stop here
            self._failed = str(e)
            raise ShardLensInputError("ShardLens: %s (Trainer)" % e) from None
        except Exception as e:  # the evaluation goes on; it is not dumped
            self._failed = str(e)
            self._run.say(("record", str(e)), "%s; this evaluation is not recorded" % e)
        if not self._failed and self._gathered is not None:
            self._gathered.append((self._gathered_logits, gathered_labels))

    def _record_rows(self, logits, labels):
        state = self.accelerator.gradient_state
        loader = getattr(state, "active_dataloader", None)
        if loader is None:
            raise Unreadable("the Trainer's loader is not one accelerator.prepare() made")
        if loader is not self._loader:
            self._start(loader)
        if self._failed:
            return
        if self._stream is None:  # a map-style dataset: Accelerate's watch replays it
            if self._order is None:
                inner = getattr(getattr(loader, "batch_sampler", None), "batch_sampler", None)
                raise Unreadable("the eval loader samples with %s, whose order is not "
                                  "replayed (only a sequential one is)" % _samplers.kind_name(
                                      getattr(inner, "sampler", None)))
            self._record((logits, labels))
            return
        rec = self.recorder
        tokens = _tokens.is_token_batch(logits, labels)
        target = labels if tokens else _tensors.flat(labels)
        n = _tensors.length(target)
        index, flags = self._stream.rows(self._step_no, n, bool(state.end_of_dataloader),
                                         state.remainder)
        if tokens:
            rec.update_tokens(index, target, logits, flags=flags)
            self._step_no += 1
            return
        if rec.num_classes is None and _tensors.is_tensor(logits) and logits.ndim == 2:
            rec.num_classes = int(logits.shape[1])
        rec.update(index, target, logits, flags=flags)
        self._step_no += 1

    def _start(self, loader):
        super()._start(loader)
        self._iterable = None  # the loop's stream is replayed here (_StreamOrder), not there
        rec, loop = self.recorder, self._loop
        stage = loop["stage"]
        epoch = self._counts.get(stage, 0)
        self._counts[stage] = epoch + 1
        rec.stage = "test" if stage == "test" else None
        rec.reset(epoch=epoch)
        self._dataset = loop["dataset"]
        self._stream, self._step_no = None, 0
        iterable = loop["shard"] is not None or loop["dispatched"]
        if iterable:
            dispatched = loop["dispatched"]
            batch = getattr(loop["shard"], "batch_size", None) if not dispatched else \
                getattr(getattr(loader, "batch_sampler", None), "batch_size", None)
            shard = loop["shard"]  # (its truth value would call its __len__)
            if getattr(shard if shard is not None else loader, "split_batches", False):
                raise Unreadable("split_batches with an IterableDataset is not replayed")
            self._stream = _StreamOrder(dispatched, rec.rank, rec.world_size, batch,
                                        loop["counter"])
            self._size = rec.dataset_size = None  # the stream's length: known at its end
            self._order = None
            rec.batch_size = batch
        _format.update_settings(rec.settings, stage=stage, epoch=epoch,
                                dataset_size=rec.dataset_size, batch_size=rec.batch_size)
        if iterable:
            _format.update_settings(rec.settings, **_stream_settings(loop["dispatched"]))

    def _finish(self):
        stream = getattr(self, "_stream", None)
        if stream is not None and stream.size is not None:
            self.recorder.dataset_size = stream.size
            _format.update_settings(self.recorder.settings, dataset_size=stream.size)
        self._copies = 0
        if stream is not None and not stream.dispatched and stream.size is not None:
            self._name_stream_copies(stream)
        super()._finish()

    def _verdict_extra(self):
        return {"stream_copies": self._copies} if self._copies else {}

    def _name_stream_copies(self, stream):
        """IterableDatasetShard's copies reach the metric (gather_for_metrics cannot trim a
        stream without a length; it only logs that at INFO): said on rank 0 with the fix
        found on transformers 5.25 / accelerate 1.15, and counted in the verdict."""
        gathered = self._step_no * stream.world * stream.b
        copies = gathered - stream.size
        if copies <= 0:
            return
        self._copies = copies
        tokens = self.recorder.task is not None
        self._run.say(("stream copies", self.recorder.stage, self.recorder.epoch), (
            "%s gathered %d %s for %d samples: the %d extra are copies of the "
            "stream's first items that IterableDatasetShard cycled to fill the last round "
            "(accelerator_config dispatch_batches=False), which gather_for_metrics cannot "
            "trim without a length%s. Fix: leave dispatch_batches at its default (rank 0 "
            "dispatches an IterableDataset and the gather trims the copies) or set it True%s; "
            "a __len__ on the dataset or dataloader_drop_last does not remove them" % (
                "Trainer.predict" if self.recorder.stage == "test" else "Trainer.evaluate",
                gathered, "sequences" if tokens else "predictions", stream.size, copies,
                ", and their tokens count again" if tokens else "",
                ", with batches of one length (the collator's padding=\"max_length\": rank 0 "
                "concatenates the ranks' batches before slicing them)" if tokens else "")))

    def _labels(self, stem):
        rec = self.recorder
        if rec.task is not None:  # sequences: their true token counts are the dumps' cells
            return None
        stage = self._loop["stage"] if self._loop else "validate"
        return self._run.labels_for(self.labels, self._dataset, rec.dataset_size, rec.out_dir,
                                    "%s_labels" % rec.name, stage=stage)


def _find_trainer(callback):
    """The Trainer whose callbacks hold `callback`, from the frames calling on_init_end (a
    callback is given the model and the loaders, not the trainer)."""
    import inspect
    frame = inspect.currentframe()
    while frame is not None:
        obj = frame.f_locals.get("self")
        handler = getattr(obj, "callback_handler", None)
        if is_trainer(obj) and callback in getattr(handler, "callbacks", ()):
            return obj
        frame = frame.f_back
    return None


class ShardLensTrainerCallback:
    """`Trainer(..., callbacks=[ShardLensTrainerCallback("runs/")])`: watch(trainer, ...) at
    the end of the Trainer's __init__ (its on_init_end), same arguments. Added later with
    trainer.add_callback it never sees on_init_end: call shardlens_recorder.watch(trainer).
    Not a TrainerCallback subclass, so importing the recorder never imports transformers:
    every other event of the Trainer's callbacks is a no-op here."""

    def __init__(self, out_dir="shardlens_runs", **kwargs):
        self.out_dir, self.kwargs = out_dir, kwargs
        self.watch = None

    @property
    def verdicts(self):
        return self.watch.verdicts if self.watch is not None else []

    def on_init_end(self, args, state, control, **kwargs):
        trainer = _find_trainer(self)
        if trainer is None:
            raise RuntimeError("ShardLensTrainerCallback: the Trainer holding it was not "
                               "found; use shardlens_recorder.watch(trainer, out_dir)")
        self.watch = self._attach(trainer)
        return control

    def _attach(self, trainer):
        """The trainer's watch: this callback's, or the one watch(trainer) already made."""
        watched = getattr(trainer, "_shardlens_watch", None)
        return watched if watched is not None else watch_trainer(trainer, self.out_dir,
                                                                 **self.kwargs)

    def __getattr__(self, attr):
        if attr.startswith("on_"):
            return self._late_event
        raise AttributeError(attr)

    def _late_event(self, args, state, control, **kwargs):
        """Any other event: when the callback was added after the Trainer was made
        (trainer.add_callback), the first event it sees installs the watch, which records
        from the next evaluation loop on."""
        if self.watch is None and not self.__dict__.get("_late_tried"):
            self._late_tried = True
            trainer = _find_trainer(self)
            if trainer is not None:
                self.watch = self._attach(trainer)
                self.watch._run.say("late", "ShardLensTrainerCallback was added after the "
                                    "Trainer was made: recording from the next evaluation "
                                    "on (shardlens_recorder.watch(trainer) records them all)")
        return control
