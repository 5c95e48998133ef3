"""Hugging Face Accelerate: watch(accelerator, dir) around gather_for_metrics."""
import os

from . import _format, _outputs, _samplers, _tensors, _tokens, _verdict
from ._outputs import Unreadable
from ._recording import Recording
from ._tensors import ShardLensInputError
from ._tokens import TokenRecorder

# The accelerator's gathers a watch can wrap, and the sync each is to `simulate --sync`.
GATHERS = {"gather_for_metrics": "gather-for-metrics", "gather": "gather"}


def _prepared_loader_settings(batch_sampler, inner):
    """What prepare() made of the loader, as `simulate --like` reads it: BatchSamplerShard's
    even_batches / split_batches and the loader's drop_last, whether the loader already held a
    DistributedSampler (sharded twice), and how it shuffles. The seed of Accelerate's default
    shuffle is a draw from the global RNG, so it is recorded only for SeedableRandomSampler
    (its own seed) and a DistributedSampler (seed + epoch)."""
    name = _samplers.kind_name(inner)
    out = {"even_batches": getattr(batch_sampler, "even_batches", None),
           "split_batches": getattr(batch_sampler, "split_batches", None),
           "loader_drop_last": getattr(getattr(batch_sampler, "batch_sampler", batch_sampler),
                                       "drop_last", None)}
    if hasattr(inner, "num_replicas") and hasattr(inner, "rank"):  # a DistributedSampler
        out.update(accelerate_input="distributed-sampler", shuffle=bool(inner.shuffle),
                   seed=int(inner.seed), sampler_epoch=int(inner.epoch),
                   sampler_drop_last=bool(inner.drop_last))
        return out
    out["accelerate_input"] = "loader"
    if name == "SeedableRandomSampler":
        out.update(accelerate_shuffle="seedable", seed=getattr(inner, "initial_seed", None),
                   sampler_epoch=getattr(inner, "epoch", None))
    elif name == "RandomSampler":
        out["accelerate_shuffle"] = "global-rng"
    return out


def _print(line):
    print(line, flush=True)


# -- Hugging Face Accelerate: one line around gather_for_metrics ------------------------------
def watch(accelerator, out_dir="shardlens_runs", name="eval", cli=None, fail_on_wrong=False,
          verdict=True, num_classes=None, labels=None, gather="gather_for_metrics",
          ignore_index=_tokens.IGNORE_INDEX):
    """`accelerator.gather_for_metrics = shardlens_recorder.watch(accelerator, "runs/")`:
    every call records the rank's own (pre-gather) batch (predictions, targets) and Accelerate's
    even_batches padding; at the end of each evaluation loader every rank writes its dump and
    rank 0 imports, diagnoses and prints the verdict. What is passed: (predictions, targets),
    (index, predictions, targets) or a dict ("predictions"/"references"/... keys). Without an
    index the loader's order is replayed (a SequentialSampler's). labels: one integer label per
    dataset index (sequence, tensor, ndarray or .npy path), imported as the true class counts;
    without it a run that skipped samples is said not to have its rows checked.
    Token classification: labels [B, T] with logits [B, T, C] or predicted ids [B, T]; each
    sequence is one sample, its tokens labelled ignore_index (-100) left out (_tokens.py).
    Segmentation: integer masks [B, H, W] with scores [B, C, H, W] (or ids of the masks'
    shape and num_classes=); each image is one sample whose pixels count, those labelled
    ignore_index (pass torchmetrics' 255) left out.
    One tensor a call, as the Hugging Face course's loop gathers them, is read in pairs:
    the predictions, then their labels.
    gather: the accelerator's method this watch stands in for, "gather_for_metrics" or
    "gather" (`accelerator.gather = watch(accelerator, "runs/", gather="gather")`: the last
    batch's even_batches copies then reach the metric, and the verdict counts them).
    Given a transformers Trainer, `watch(trainer, "runs/")` records its evaluate and predict
    (_hf_trainer.py) and installs itself."""
    from . import _hf_trainer
    if _hf_trainer.is_trainer(accelerator):
        return _hf_trainer.watch_trainer(accelerator, out_dir, name, cli, fail_on_wrong,
                                         verdict, num_classes, labels, ignore_index)
    return _AccelerateWatch(accelerator, out_dir, name, cli, fail_on_wrong, verdict, labels,
                            num_classes, gather, ignore_index)


def _loss_like(tensor):
    """A scalar or [B] floats gathered alone: a loss, not predictions waiting for labels."""
    return tensor.ndim == 0 or (tensor.ndim == 1 and tensor.is_floating_point())


def _labels_of(predictions, labels):
    """Whether `labels`, gathered after `predictions`, are their integer labels."""
    return labels.ndim >= 1 and not labels.is_floating_point() and \
        labels.shape[0] == predictions.shape[0]


class _AccelerateWatch:
    def __init__(self, accelerator, out_dir, name, cli, fail_on_wrong, verdict, labels,
                 num_classes, gather="gather_for_metrics", ignore_index=_tokens.IGNORE_INDEX):
        if gather not in GATHERS:
            raise ValueError("gather must be one of %s, got %r" % (sorted(GATHERS), gather))
        original = getattr(accelerator, gather)
        self.original = getattr(original, "original", original)  # watched twice: once
        self.sync = GATHERS[gather]
        self.accelerator = accelerator
        self.recorder = TokenRecorder(out_dir, name=name, num_classes=num_classes,
                                      rank=accelerator.process_index,
                                      world_size=accelerator.num_processes,
                                      ignore_index=ignore_index)
        self._pending = None  # (own, gathered) predictions of a one-tensor call: labels next
        self._run = Recording(lambda: accelerator.process_index, cli, verdict, fail_on_wrong)
        self.labels = labels  # one label per dataset index: the true class counts
        self._loader = None
        self._evaluations = 0
        self._failed = None
        self._object_gather = False

    @property
    def verdicts(self):
        """Rank 0: what each diagnosed evaluation said (the one judged in the background
        waited for)."""
        self._run.settle()
        return self._run.verdicts

    def __call__(self, input_data, *args, **kwargs):
        self._run.poll()  # the last evaluation's verdict, once judged
        pending = None
        if _tensors.is_tensor(input_data):
            # One tensor a call (the Hugging Face course's loop): predictions, then their
            # labels, are one batch. A loss (a scalar, or [B] floats) is neither: it passes.
            pending, self._pending = self._pending, None
            if pending is None or not _labels_of(pending[0], input_data):
                out = self.original(input_data, *args, **kwargs)
                if not _loss_like(input_data):
                    self._pending = (input_data, out)
                return out
            input_data = (pending[0], input_data)
        else:
            self._pending = None
        try:
            self._record(input_data)
            # gather_object takes lists of any length: nothing needs padding to gather them
            self._object_gather = self._object_gather or bool(
                kwargs.get("use_gather_object", args[0] if args else False))
        except ShardLensInputError as e:  # the frameworks refuse it too: stop here
            self._failed = str(e)
            raise ShardLensInputError("ShardLens: %s (gather_for_metrics)" % e) from None
        except Exception as e:  # the user's gather goes on; this evaluation is not dumped
            self._failed = str(e)
            self._run.say(("record", str(e)), "%s; this evaluation is not recorded" % e)
        if pending is not None:
            out = self.original(input_data[1], *args, **kwargs)
            gathered = (pending[1], out)
        else:
            out = gathered = self.original(input_data, *args, **kwargs)
        if not self._failed:
            try:  # what the metric is fed: the reported matrix, kept on the device
                self._gathered.append(_outputs.read_gathered(gathered)[1:])
            except Exception:
                self._gathered = None
                self._failed = "gather_for_metrics returned what the watch cannot read"
        state = getattr(self.accelerator, "gradient_state", None)
        if state is not None and getattr(state, "end_of_dataloader", False):
            self._finish()
        return out

    def _start(self, loader):
        rec = self.recorder
        rec.reset(epoch=self._evaluations)
        self._evaluations += 1
        self._loader, self._failed, self._step, self._order = loader, None, 0, None
        self._replayed = self._pad_rows = 0  # rows of the order replayed; padded rows seen
        self._object_gather = False
        self._gathered = []  # (predictions, targets) as gather_for_metrics returned them
        batch_sampler = getattr(loader, "batch_sampler", None)
        self._batch_size = getattr(batch_sampler, "batch_size", None) or \
            getattr(loader, "total_batch_size", None)
        dataset = getattr(loader, "dataset", None)
        self._dataset = dataset  # its own labels (targets, labels, ...) when labels= is not given
        try:  # an IterableDatasetShard has a __len__ that raises over an unsized stream
            self._size = len(dataset)
        except TypeError:
            self._size = None
        self._split = bool(getattr(batch_sampler, "split_batches", False))
        rec.dataset_size, rec.batch_size = self._size, self._batch_size
        inner = getattr(getattr(batch_sampler, "batch_sampler", None), "sampler", None)
        settings = _format.new_settings(
            "accelerate", sampler="accelerate",
            inner_sampler=_samplers.inner_kind(inner) if inner is not None else None,
            shuffle=_samplers.kind_name(inner) != "SequentialSampler" if inner is not None
            else None,
            batch_size=self._batch_size,
            batch_size_source="loader" if self._batch_size is not None else None,
            sync=self.sync,  # what this watch wraps, and what the metric is fed
            world_size=rec.world_size, rank=rec.rank,
            dataset_size=self._size, stage="validate", epoch=rec.epoch,
            versions=_format.versions())
        rec.settings = _format.update_settings(settings, **_prepared_loader_settings(
            batch_sampler, inner))
        # Every rank's batch lengths where they may differ (even_batches=False): rows past a
        # rank's own batch are the ones pad_across_processes added.
        self._lengths = _samplers.accelerate_batch_lengths(batch_sampler, rec.world_size)
        if _samplers.kind_name(inner) == "SequentialSampler" and batch_sampler is not None:
            # This rank's batches, dealt again: a sequential order draws nothing.
            self._order = [i for batch in batch_sampler for i in batch]
        self._iterable = "dispatched" if _samplers.kind_name(loader) == "DataLoaderDispatcher" \
            else "sharded" if _samplers.kind_name(dataset) == "IterableDatasetShard" else None
        if self._iterable:
            from ._hf_trainer import _stream_settings
            _format.update_settings(rec.settings, **_stream_settings(
                self._iterable == "dispatched"))

    def _stream_flags(self, index, n):
        """The copies among a stream's rows. IterableDatasetShard gives rank r the positions
        s * W * B + r * B + k of round s and fills a short last round by cycling the first
        items, so a row whose index is not its position is a copy. DataLoaderDispatcher
        splits its last round of m items (the loader's remainder) into ceil(m / W) a rank,
        completed with the stream's first items: row k of rank r is a copy when
        r * ceil(m / W) + k >= m."""
        rec = self.recorder
        b, world = self._batch_size or 0, rec.world_size
        if self._iterable == "dispatched":
            state = self.accelerator.gradient_state
            m = getattr(state, "remainder", -1)
            if not getattr(state, "end_of_dataloader", False) or m is None or m <= 0:
                return [0] * n
            width = -(-m // world)
            return [_samplers.PADDING if rec.rank * width + k >= m else 0 for k in range(n)]
        first = self._step * world * b + rec.rank * b
        if _tensors.is_tensor(index):
            import torch
            fresh = torch.arange(first, first + n, device=index.device)
            return (index.reshape(-1)[:n] != fresh).byte() * _samplers.PADDING
        return [_samplers.PADDING if int(i) != first + k else 0
                for k, i in enumerate(index[:n])]

    def _stream_size(self):
        """A stream's length: the largest index any rank recorded, plus one (its copies are
        of the first items). Every rank calls it at the end of the evaluation, one that could
        not record too (a collective)."""
        import torch
        import torch.distributed as dist
        top = torch.zeros(1, dtype=torch.int64)
        try:
            index = self.recorder._columns()["index"] if not self._failed else ()
            top[0] = int(index.max()) + 1 if len(index) else 0
        except Exception:  # said where it failed; this rank's dump is not written
            pass
        if dist.is_available() and dist.is_initialized():
            top = top.to(self.accelerator.device)  # NCCL reduces device tensors only
            dist.all_reduce(top, op=dist.ReduceOp.MAX)
        return int(top)

    def _record(self, data):
        loader = getattr(getattr(self.accelerator, "gradient_state", None),
                         "active_dataloader", None)
        if loader is None:  # no end_of_dataloader would ever end this evaluation
            raise Unreadable("gather_for_metrics was called outside a loader "
                              "accelerator.prepare() made: where an evaluation ends is unknown")
        if loader is not self._loader:
            self._start(loader)
        if self._failed:
            return
        index, pred, target = _outputs.read_gathered(data)
        rec = self.recorder
        tokens = _tokens.is_token_batch(pred, target)
        masks = not tokens and _tokens.is_mask_batch(pred, target)
        dense = tokens or masks
        if dense != (rec.task is not None) and rec.count:
            raise ShardLensInputError("batch %d holds %s after batches of %s" % (
                self._step, *(("sequences or masks", "single labels") if dense else
                              ("single labels", rec.task))))
        if not dense:
            target = _tensors.flat(target)
        n = _tensors.length(target)
        own = self._own_length(n)
        if index is None and self._iterable:
            raise Unreadable("the rows of an IterableDataset are not replayed: pass "
                              "(index, predictions, targets)")
        if index is None:
            if self._order is None:
                raise Unreadable("no dataset index: the loader is not sequential; pass "
                                  "(index, predictions, targets)")
            index = self._order[self._replayed:self._replayed + own] + [0] * (n - own)
        if rec.num_classes is None and _tensors.is_tensor(pred) and pred.ndim == 2 and \
                not dense:
            rec.num_classes = int(pred.shape[1])
        flags = None
        if self._batch_size and self._size is not None:
            flags = _samplers.accelerate_padding_flags(self._step, rec.rank, rec.world_size,
                                             self._batch_size, self._size, own, self._split)
        if self._iterable:
            flags = self._stream_flags(index, own)
        if own < n:  # the padded rows: recorded, flagged, never counted as samples
            flags = (flags or [0] * own) + [_samplers.PAD_ROW] * (n - own)
        if tokens:
            rec.update_tokens(index, target, pred, flags=flags)
        elif masks:
            rec.update_masks(index, target, pred, flags=flags)
        else:
            rec.update(index, target, pred, flags=flags)
        self._step += 1
        self._replayed += own
        self._pad_rows += n - own

    def _own_length(self, n):
        """The rows of this rank's own batch at this step among the n it passed: a tensor
        longer than the batch its loader yielded was padded to the step's longest
        (accelerator.pad_across_processes), its last rows no samples."""
        lengths = self._lengths[self.recorder.rank] if self._lengths else None
        if lengths is None or self._step >= len(lengths):
            return n
        return min(n, lengths[self._step])

    def _padded(self):
        """Whether the gathered tensors were padded: rows this rank saw padded, or last
        batches of unequal lengths that gathered all the same (only padded tensors do;
        gather_object aside), so every rank records the same."""
        return self._pad_rows > 0 or (
            not self._object_gather and _samplers.unequal_steps(self._lengths))

    def _reported(self):
        """The matrix of everything gather_for_metrics returned: one bincount, one transfer."""
        import torch
        if not self._gathered:
            return None
        if self.recorder.task is not None:
            return self._reported_tokens()
        preds = torch.cat([_tensors.class_ids_lazy(p, self.recorder.threshold).reshape(-1).long()
                           for p, _ in self._gathered])
        target = torch.cat([_tensors.flat(t).long() for _, t in self._gathered])
        c = self.recorder.num_classes
        if c is None:  # class ids were gathered, not scores: the largest id seen tells
            c = self.recorder.num_classes = int(torch.maximum(preds.max(), target.max())) + 1
        inside = (target >= 0) & (target < c) & (preds >= 0) & (preds < c)
        return torch.bincount((target * c + preds)[inside], minlength=c * c).reshape(c, c).cpu()

    def _reported_tokens(self):
        """The matrix of every non-ignored token the gathers returned (the cross-process
        padding is labelled ignore_index), step by step: their lengths differ."""
        rec = self.recorder
        return sum(_tokens.token_matrix(t, p, rec.classes(), rec.ignore_index)
                   for p, t in self._gathered).cpu()

    def _labels(self, stem):
        """The int64 .npy of the labels (labels=, else the dataset's own) beside the dumps,
        named by content: written once, never overwritten by another evaluation's. None for
        sequences: their true token counts are in the dumps' cells."""
        rec = self.recorder
        if rec.task is not None:
            return None
        return self._run.labels_for(self.labels, getattr(self, "_dataset", None),
                                    rec.dataset_size, rec.out_dir, "%s_labels" % rec.name)

    def _finish(self):
        """Every rank writes its dump and waits for the others; rank 0 gives the verdict."""
        rec, acc = self.recorder, self.accelerator
        self._loader = None
        written = []
        self._pending = None
        if getattr(self, "_iterable", None):
            rec.dataset_size = self._stream_size()
            _format.update_settings(rec.settings, dataset_size=rec.dataset_size)
        try:
            if not self._failed and rec.count:
                rec.set_reported(self._reported())
                if rec.settings is not None and rec.num_classes is not None:
                    _format.update_settings(rec.settings, num_classes=rec.num_classes)
                if rec.settings is not None:
                    _format.update_settings(rec.settings, pad_across_processes=self._padded())
                written = rec.save()
        except Exception as e:  # a full disk, a target that was not a class id after the
            # first batch: no dump, the evaluation goes on
            self._run.say(("save", str(e)), "cannot write the dump: %s" % e)
        acc.wait_for_everyone()
        failure = None
        if acc.process_index == 0 and self._run.verdict and written:
            world, extra = rec.world_size, self._verdict_extra()
            # The labels files are written now: the recorder moves on to the next evaluation.
            labels = {stem: self._labels(stem) for stem in
                      {p.rsplit("_rank", 1)[0] for p in written}}
            if self._run.fail_on_wrong:  # every rank waits for the diagnosis to stop on
                failure = self._run.judge(written, world, False, labels.get, log=self._log)
            else:
                def judge(deliver):
                    before = len(self._run.verdicts)
                    # The line as soon as it is known (a script may not gather again for an
                    # epoch); the trackers from the evaluation's thread.
                    self._run.judge(written, world, False, labels.get, _print,
                                    lambda v: deliver(self._log, v))
                    for v in self._run.verdicts[before:]:
                        v.update(extra)
                self._run.in_background(judge)
        self._run.stop_on_failure(failure)

    def _verdict_extra(self):
        """What a front end built on this watch adds to the verdicts of this evaluation."""
        return {}

    def _log(self, v):
        if getattr(self.accelerator, "trackers", None):
            self.accelerator.log(_verdict.scalars(v))
