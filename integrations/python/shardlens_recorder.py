"""Record what every rank of a distributed evaluation actually evaluated, for ShardLens.

Add a recorder to your own torch.distributed (or PyTorch Lightning) evaluation; each rank
writes one dump per epoch with the dataset index, target and prediction of every sample it
evaluated (plus, optionally, its local confusion matrix and the reported one). Then:

    shardlens-cli import dumps/eval_epoch*_rank*.npz --dataset fashion-mnist:test --out run.slrun
    shardlens-cli diagnose --run run.slrun

Install it with `pip install --no-build-isolation integrations/python` (or
/usr/share/shardlens/python from the .deb), or copy this one file next to your script.

Plain torch.distributed::

    from shardlens_recorder import ShardLensRecorder, IndexedDataset
    data = IndexedDataset(test_set)
    loader = DataLoader(data, batch_size=64, sampler=DistributedSampler(data, shuffle=True))
    rec = ShardLensRecorder("dumps", num_classes=10, sampler=loader.sampler)
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)         # the recorder reads sampler.epoch
        rec.reset()                             # a new epoch: records and matrices cleared
        for index, x, y in loader:
            rec.update(index, y, model(x))      # logits are reduced by argmax
        rec.set_reported(synced_confmat)        # optional: what your metric reported
        rec.save()                              # dumps/eval_epoch<e>_rank<r>.npz

Lightning (the callback works without Lightning installed: its base is then a plain class)::

    trainer = Trainer(callbacks=[ShardLensCallback(ShardLensRecorder("dumps", num_classes=10))])
    # validation_step returns {"index": index, "target": y, "prediction": logits}

Hugging Face Accelerate (and the HF Trainer's evaluation loop): record each rank's own batch
before it is gathered, flag Accelerate's cycled even_batches padding, and keep the matrix
your metric reported from the gathered predictions::

    data = IndexedDataset(test_set)
    loader = accelerator.prepare(DataLoader(data, batch_size=64))
    rec = ShardLensRecorder("dumps", num_classes=10, rank=accelerator.process_index,
                            world_size=accelerator.num_processes, dataset_size=len(data),
                            batch_size=64)
    for step, (index, x, y) in enumerate(loader):
        logits = model(x)
        rec.update(index, y, logits, flags=accelerate_padding_flags(
            step, accelerator.process_index, accelerator.num_processes, 64, len(data), len(y)))
        preds, refs = accelerator.gather_for_metrics((logits.argmax(-1), y))
        metric.add_batch(predictions=preds, references=refs)
    rec.save()
    # shardlens-cli import dumps/eval_epoch0_rank*.npz --out run.slrun, then diagnose --run,
    # and simulate the same loader with --sampler accelerate to compare.

The epoch of a dump is, in this order: an explicit `epoch` (ShardLensRecorder(epoch=...),
reset(epoch=...), save(epoch=...) or the `epoch` attribute), else the sampler's `epoch`
attribute (what DistributedSampler.set_epoch sets), else 0. Dumps are named
{name}_epoch{e}_rank{r}.npz/.pt; a dump recorded during Lightning's sanity check is named
{name}_sanity_epoch{e}_rank{r}, every record flagged SANITY, and the callback's test stage
writes {name}_test_epoch{e}_rank{r}, so neither matches the glob {name}_epoch*.

Dump format (what `shardlens-cli import` reads): an .npz and/or a .pt (torch.save of a dict
of tensors) with index, target, prediction, flags, rank, world_size, epoch [, sanity,
dataset_size, batch_size, matrix, reported]. Files are written atomically (temporary file +
rename). Only numpy (for .npz) and torch (for .pt, tensors) are needed, and only when used.
"""

import os
import tempfile

__version__ = "0.1.0"
__all__ = ["ShardLensRecorder", "IndexedDataset", "PADDING", "SANITY", "ShardLensCallback",
           "LIGHTNING", "accelerate_padding_flags"]

PADDING = 1  # a DistributedSampler padding duplicate
SANITY = 2  # evaluated during Lightning's sanity check


def accelerate_padding_flags(step, rank, world_size, batch_size, dataset_size, length,
                             split_batches=False):
    """PADDING flags of one rank's batch under Accelerate's BatchSamplerShard.

    Accelerate deals the loader's batches round-robin (batch step * W + rank goes to `rank`;
    with split_batches every batch of `batch_size` is split into W slices) and, with
    even_batches, completes the last round by cycling samples from the start of the order.
    A position of that stream at or past len(dataset) is such a cycled copy.
    """
    if split_batches:
        start = step * batch_size + rank * (batch_size // world_size)
    else:
        start = (step * world_size + rank) * batch_size
    return [PADDING if start + k >= dataset_size else 0 for k in range(length)]


def _to_list(values):
    """Tensor, ndarray, list or scalar -> flat list of Python ints."""
    if hasattr(values, "detach"):
        values = values.detach().cpu()
        if values.dim() == 0:
            return [int(values.item())]
        return [int(v) for v in values.reshape(-1).tolist()]
    if hasattr(values, "tolist"):
        values = values.tolist()
    if isinstance(values, (list, tuple)):
        out = []
        for v in values:
            out.extend(_to_list(v) if isinstance(v, (list, tuple)) else [int(v)])
        return out
    return [int(values)]


def _class_ids(prediction):
    """Class ids from ids [N] or scores [N, C] (argmax over the last dimension)."""
    if hasattr(prediction, "detach"):
        if prediction.dim() == 2:
            return _to_list(prediction.detach().argmax(dim=1))
        return _to_list(prediction)
    if hasattr(prediction, "ndim") and prediction.ndim == 2:
        return _to_list(prediction.argmax(axis=1))
    return _to_list(prediction)


def _check_epoch(epoch):
    """None, or the epoch as a non-negative Python int (tensors and numpy scalars too)."""
    if epoch is None:
        return None
    if hasattr(epoch, "item"):
        epoch = epoch.item()
    if isinstance(epoch, bool) or int(epoch) != epoch or epoch < 0:
        raise ValueError("epoch must be a non-negative integer, got %r" % (epoch,))
    return int(epoch)


def _dist_rank_world():
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return dist.get_rank(), dist.get_world_size()
    except ImportError:
        pass
    return int(os.environ.get("RANK", "0")), int(os.environ.get("WORLD_SIZE", "1"))


def _atomic_write(path, write):
    """Calls write(temp_path), then renames over `path`, so readers never see half a file."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class IndexedDataset:
    """Wraps a dataset so each item is (index, *item): the loader then yields dataset
    indices, which is what makes duplicates and never-seen samples visible."""

    def __init__(self, dataset):
        self.dataset = dataset

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        item = self.dataset[index]
        if isinstance(item, tuple):
            return (index,) + item
        return index, item


class ShardLensRecorder:
    """Collects (index, target, prediction, flags) of one rank and saves them as a dump."""

    def __init__(self, out_dir, name="eval", num_classes=None, rank=None, world_size=None,
                 dataset_size=None, batch_size=None, sampler=None, formats=("npz",),
                 epoch=None):
        """
        out_dir: directory for the dumps ({name}_epoch{e}_rank{r}.npz / .pt).
        num_classes: enables the local confusion matrix (saved as `matrix`).
        rank, world_size: default to torch.distributed's, else RANK / WORLD_SIZE, else 0 / 1.
        sampler: a torch DistributedSampler; lets the recorder flag padding duplicates
                 (position k of rank r is padding when r + k * num_replicas >= len(dataset)).
        formats: any of "npz" (needs numpy) and "pt" (torch.save of a dict of tensors).
        epoch: the epoch of the dumps; None (default) takes the sampler's `epoch` attribute
               (DistributedSampler.set_epoch), else 0. reset(epoch=) and save(epoch=) set it.
        """
        unknown = set(formats) - {"npz", "pt"}
        if unknown:
            raise ValueError("unknown dump formats: %s" % sorted(unknown))
        self.out_dir = out_dir
        self.name = name
        self.num_classes = num_classes
        self._rank = rank
        self._world_size = world_size
        self.dataset_size = dataset_size
        self.batch_size = batch_size
        self.sampler = sampler
        self.formats = tuple(formats)
        self.reported = None
        self.matrix = None
        self.sanity = False  # set while Lightning's sanity check runs
        self.stage = None  # a tag in the file names, e.g. "test" (set by ShardLensCallback)
        self.epoch = _check_epoch(epoch)
        self.reset()

    # -- identity -------------------------------------------------------------------------
    @property
    def rank(self):
        return self._rank if self._rank is not None else _dist_rank_world()[0]

    @property
    def world_size(self):
        return self._world_size if self._world_size is not None else _dist_rank_world()[1]

    @property
    def current_epoch(self):
        """The epoch the next save() records: the explicit `epoch`, else the sampler's
        `epoch` attribute (set by DistributedSampler.set_epoch), else 0."""
        if self.epoch is not None:
            return self.epoch
        sampler_epoch = getattr(self.sampler, "epoch", None)
        if sampler_epoch is not None:
            return _check_epoch(sampler_epoch)
        return 0

    # -- recording ------------------------------------------------------------------------
    def reset(self, epoch=None):
        """Starts a new epoch: clears the records, the matrix and the reported matrix.
        epoch: sets the explicit epoch (kept until changed; None keeps the current one)."""
        self.index, self.target, self.prediction, self.flags = [], [], [], []
        self.matrix = None
        self.reported = None
        if epoch is not None:
            self.epoch = _check_epoch(epoch)

    def update(self, index, target, prediction, flags=None):
        """Adds one batch. prediction: class ids [N] or scores/logits [N, C]."""
        index, target, pred = _to_list(index), _to_list(target), _class_ids(prediction)
        if not (len(index) == len(target) == len(pred)):
            raise ValueError("index, target and prediction lengths differ: %d, %d, %d"
                             % (len(index), len(target), len(pred)))
        if flags is not None:
            flags = _to_list(flags)
            if len(flags) != len(index):
                raise ValueError("flags length %d != batch length %d" % (len(flags), len(index)))
            if self.sanity:
                flags = [f | SANITY for f in flags]
        else:
            flags = [self._position_flags(len(self.index) + k) for k in range(len(index))]
        self.index += index
        self.target += target
        self.prediction += pred
        self.flags += flags

    def _position_flags(self, position):
        flags = SANITY if self.sanity else 0
        s = self.sampler
        if s is not None and hasattr(s, "num_replicas") and hasattr(s, "dataset"):
            # Sampler order position of the k-th sample of rank r is r + k * W; positions
            # past len(dataset) repeat the start of the order (DistributedSampler padding).
            if not getattr(s, "drop_last", False) and \
                    s.rank + position * s.num_replicas >= len(s.dataset):
                flags |= PADDING
        return flags

    def set_matrix(self, matrix):
        """The rank's own accumulated confusion matrix (e.g. a metric's local state)."""
        self.matrix = matrix

    def set_reported(self, matrix):
        """The matrix the evaluation reported (after synchronization)."""
        self.reported = matrix

    def local_matrix(self):
        """Confusion matrix of this rank's records (row = target, column = prediction)."""
        c = self.num_classes
        m = [[0] * c for _ in range(c)]
        for t, p in zip(self.target, self.prediction):
            if 0 <= t < c and 0 <= p < c:
                m[t][p] += 1
        return m

    # -- saving ---------------------------------------------------------------------------
    def _arrays(self, epoch):
        """name -> (nested list or ndarray/tensor, kind) of everything the dump holds."""
        out = {
            "index": (self.index, "i8"),
            "target": (self.target, "i8"),
            "prediction": (self.prediction, "i8"),
            "flags": (self.flags, "u1"),
            "rank": (self.rank, "i8"),
            "world_size": (self.world_size, "i8"),
            "epoch": (epoch, "i8"),
        }
        if self.sanity:
            out["sanity"] = (1, "i8")
        dataset_size = self.dataset_size
        if dataset_size is None and self.sampler is not None and hasattr(self.sampler, "dataset"):
            dataset_size = len(self.sampler.dataset)
        if dataset_size is not None:
            out["dataset_size"] = (dataset_size, "i8")
        if self.batch_size is not None:
            out["batch_size"] = (self.batch_size, "i8")
        if self.matrix is not None:
            out["matrix"] = (self.matrix, "m")
        elif self.num_classes is not None:
            out["matrix"] = (self.local_matrix(), "i8")
        if self.reported is not None:
            out["reported"] = (self.reported, "m")
        return out

    def path(self, fmt, epoch=None):
        """{out_dir}/{name}[_{stage}][_sanity]_epoch{e}_rank{r}.{fmt}"""
        epoch = self.current_epoch if epoch is None else _check_epoch(epoch)
        parts = [self.name]
        if self.stage:
            parts.append(self.stage)
        if self.sanity:
            parts.append("sanity")
        parts.append("epoch%d_rank%d.%s" % (epoch, self.rank, fmt))
        return os.path.join(self.out_dir, "_".join(parts))

    def save(self, epoch=None):
        """Writes this rank's dump(s) of the current epoch; returns the paths written.
        epoch: sets the explicit epoch first (as reset(epoch=) does)."""
        if epoch is not None:
            self.epoch = _check_epoch(epoch)
        epoch = self.current_epoch
        arrays = self._arrays(epoch)
        written = []
        if "npz" in self.formats:
            written.append(self._save_npz(arrays, self.path("npz", epoch)))
        if "pt" in self.formats:
            written.append(self._save_pt(arrays, self.path("pt", epoch)))
        return written

    def _save_npz(self, arrays, path):
        import numpy as np

        def as_numpy(value, kind):
            if hasattr(value, "detach"):
                value = value.detach().cpu().numpy()
            a = np.asarray(value)
            if kind == "m":  # a matrix: integers stay integers, float counters stay floats
                return a.astype(np.int64) if a.dtype.kind in "biu" else a.astype(np.float64)
            return a.astype(np.uint8 if kind == "u1" else np.int64)

        data = {k: as_numpy(v, kind) for k, (v, kind) in arrays.items()}

        def write(tmp):
            with open(tmp, "wb") as f:
                np.savez(f, **data)

        _atomic_write(path, write)
        return path

    def _save_pt(self, arrays, path):
        import torch

        def as_tensor(value, kind):
            if hasattr(value, "detach"):
                t = value.detach().cpu()
                if kind == "m":
                    return t.to(torch.int64) if not t.is_floating_point() else t.to(torch.float64)
                return t.to(torch.uint8 if kind == "u1" else torch.int64)
            dtype = torch.uint8 if kind == "u1" else torch.int64
            if kind == "m":
                t = torch.tensor(value)
                return t.to(torch.float64) if t.is_floating_point() else t.to(torch.int64)
            return torch.tensor(value, dtype=dtype)

        data = {k: as_tensor(v, kind) for k, (v, kind) in arrays.items()}
        _atomic_write(path, lambda tmp: torch.save(data, tmp))
        return path


def _stage_sampler(trainer, stage):
    """The sampler of the stage's dataloader when there is exactly one, else None."""
    try:
        loaders = getattr(trainer, "test_dataloaders" if stage == "test" else "val_dataloaders",
                          None)
    except Exception:  # a property that cannot answer outside its loop
        return None
    if isinstance(loaders, (list, tuple)):
        loaders = loaders[0] if len(loaders) == 1 else None
    sampler = getattr(loaders, "sampler", None)
    if sampler is not None and hasattr(sampler, "num_replicas") and hasattr(sampler, "dataset"):
        return sampler
    return None


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


class ShardLensCallback(_CallbackBase):
    """A Lightning callback recording validation/test batches whose step returns a dict with
    index, target and prediction (or preds/logits); saves one dump per rank and evaluation.

    Every validation run is kept: its dump is named after trainer.current_epoch
    ({name}_epoch{e}_rank{r}), so epochs never overwrite each other. The sanity check
    (trainer.sanity_checking) is kept too, flagged: every record has flags |= SANITY, the
    dump has `sanity` = 1 and is named {name}_sanity_epoch{e}_rank{r}. Test runs are
    named {name}_test_epoch{e}_rank{r}. The dump is written in on_validation_end /
    on_test_end, after the LightningModule's on_*_epoch_end, so a reported matrix set there
    (recorder.set_reported) is included.

    When the recorder has no sampler, the callback uses the sampler of the stage's single
    dataloader (trainer.val_dataloaders / trainer.test_dataloaders: the DistributedSampler
    Lightning injects), for padding flags and dataset_size.

    stages: any of "validate" and "test". sanity: False skips the sanity check.
    """

    def __init__(self, recorder, stages=("validate", "test"), sanity=True):
        super().__init__()
        unknown = set(stages) - {"validate", "test"}
        if unknown:
            raise ValueError("unknown stages: %s" % sorted(unknown))
        self.recorder = recorder
        self.stages = tuple(stages)
        self.sanity = sanity
        self._recording = False
        self._own_sampler = recorder.sampler is not None  # else taken from the dataloader

    def _start(self, trainer, stage):
        sanity = bool(getattr(trainer, "sanity_checking", False))
        self._recording = stage in self.stages and (self.sanity or not sanity)
        if not self._recording:
            return
        rec = self.recorder
        rec.reset(epoch=int(getattr(trainer, "current_epoch", 0) or 0))
        rec.sanity = sanity
        rec.stage = "test" if stage == "test" else None
        # Lightning knows the rank even before (or without) torch.distributed.
        if rec._rank is None and getattr(trainer, "global_rank", None) is not None:
            rec._rank = int(trainer.global_rank)
        if rec._world_size is None and getattr(trainer, "world_size", None) is not None:
            rec._world_size = int(trainer.world_size)
        if not self._own_sampler:
            rec.sampler = _stage_sampler(trainer, stage)

    def _batch(self, outputs):
        if not self._recording or not isinstance(outputs, dict):
            return
        pred = None
        for key in ("prediction", "preds", "logits"):
            if key in outputs:
                pred = outputs[key]
                break
        if pred is not None and "index" in outputs and "target" in outputs:
            self.recorder.update(outputs["index"], outputs["target"], pred)

    def _end(self):
        if not self._recording:
            return []
        self._recording = False
        rec = self.recorder
        try:
            return rec.save()
        finally:
            rec.sanity = False
            rec.stage = None

    # Lightning 2.x hook signatures (lightning.pytorch.Callback).
    def on_validation_epoch_start(self, trainer, pl_module):
        self._start(trainer, "validate")

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                                dataloader_idx=0):
        self._batch(outputs)

    def on_validation_end(self, trainer, pl_module):
        self._end()

    def on_test_epoch_start(self, trainer, pl_module):
        self._start(trainer, "test")

    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                          dataloader_idx=0):
        self._batch(outputs)

    def on_test_end(self, trainer, pl_module):
        self._end()
