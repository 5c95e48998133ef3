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

    trainer = Trainer(callbacks=[ShardLensCallback("runs/")])   # the LightningModule unchanged
    # The module's torchmetrics classification metrics are watched (their update() inputs,
    # per-rank states and synced compute()); indices are replayed from the sampler Lightning
    # injected; rank 0 imports, diagnoses, prints and logs the verdict of every validation.
    # Without such metrics: validation_step returns its logits (targets: the batch's last
    # element), or (logits, y), or a dict: see ShardLensCallback.

Accelerate::

    accelerator.gather_for_metrics = watch(accelerator, "runs/")   # see watch()

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
writes {name}_test_epoch{e}_rank{r}, so neither matches the glob {name}_epoch*. The callback
adds _val{v} (the v-th validation of an epoch) and _dl{d} (the loader) before _rank when not 0.

Dump format (what `shardlens-cli import` reads): an .npz and/or a .pt (torch.save of a dict
of tensors) with index, target, prediction, flags, rank, world_size, epoch [, sanity,
dataset_size, batch_size, matrix, reported], dataloader_idx, validation_in_epoch and
settings_json (uint8 bytes of a UTF-8 JSON object, keys SETTINGS_KEYS: how the run sampled,
batched and limited, so it can be simulated again). Files are written atomically (temporary file +
rename). Only numpy (for .npz) and torch (for .pt, tensors) are needed, and only when used.
"""

import copy
import json
import os
import tempfile
import warnings

__version__ = "0.1.0"  # = CMakeLists.txt project VERSION; pyproject.toml reads it
__all__ = ["ShardLensRecorder", "IndexedDataset", "PADDING", "SANITY", "ShardLensCallback",
           "LIGHTNING", "accelerate_padding_flags", "ShardLensWarning", "ShardLensVerdictError", "watch",
           "SETTINGS_KEYS"]

PADDING = 1  # a DistributedSampler padding duplicate
SANITY = 2  # evaluated during Lightning's sanity check

# The keys of a dump's settings_json (UTF-8 JSON, uint8 array), what `shardlens-cli import`
# reads to re-simulate the run; null where unknown.
SETTINGS_KEYS = ("framework", "sampler", "inner_sampler", "shuffle", "seed", "sampler_epoch",
                 "sampler_drop_last", "loader_drop_last", "batch_size", "limit_batches",
                 "sanity_steps", "sanity", "stage", "dataloader_idx", "validation_in_epoch",
                 "val_check_interval", "world_size", "rank", "dataset_size", "num_classes",
                 "epoch", "global_step", "versions")


class ShardLensWarning(UserWarning):
    """What the recorder could not record, and why (said once, on rank 0)."""


class ShardLensVerdictError(RuntimeError):
    """fail_on_wrong=True: the diagnosis of a validation whose reported matrix is wrong."""


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


_SHAPES = "[N] class ids, [N, C] logits or probabilities, or [N] / [N, 1] binary scores"


def _class_ids(prediction, threshold=0.5):
    """Class ids of one batch, as torchmetrics reads predictions:
    [N] integer ids; [N, C] scores (C > 1): argmax over C (MulticlassConfusionMatrix);
    [N] or [N, 1] floats: binary scores, sigmoid first when any value of the batch lies
    outside [0, 1], then > threshold (its binary metrics). Anything else: ValueError naming
    the shape, never a silent guess."""
    if isinstance(prediction, (list, tuple)) or not hasattr(prediction, "shape"):
        try:
            import numpy as np
        except ImportError:
            return _to_list(prediction)
        prediction = np.asarray(prediction)
    shape = tuple(prediction.shape)
    if len(shape) == 0:  # one sample's prediction
        prediction, shape = prediction.reshape(1), (1,)
    if len(shape) == 2 and shape[1] == 1:
        prediction, shape = prediction.reshape(-1), (shape[0],)
    if hasattr(prediction, "detach"):  # a torch tensor: its own ops, so dtypes match torchmetrics
        p = prediction.detach()
        if len(shape) == 2:
            return _to_list(p.argmax(dim=1))
        if len(shape) == 1:
            if p.is_floating_point():
                if not bool(((p >= 0) & (p <= 1)).all()):
                    p = p.sigmoid()
                return _to_list(p > threshold)
            return _to_list(p)
    else:  # numpy
        import numpy as np
        p = np.asarray(prediction)
        if len(shape) == 2:
            return _to_list(p.argmax(axis=1))
        if len(shape) == 1:
            if p.dtype.kind == "f":
                if not ((p >= 0) & (p <= 1)).all():
                    p = 1.0 / (1.0 + np.exp(-p))
                return _to_list(p > threshold)
            return _to_list(p)
    raise ValueError("a prediction of shape %s cannot be read as class ids: expected %s"
                     % (list(shape), _SHAPES))


def _is_tensor(value):
    return hasattr(value, "detach") and hasattr(value, "device")


def _flat(values):
    """A tensor or ndarray flattened (a tensor stays on its device), else a list of ints."""
    if _is_tensor(values):
        return values.detach().reshape(-1)
    if hasattr(values, "reshape") and hasattr(values, "dtype"):
        return values.reshape(-1)
    return _to_list(values)


def _length(values):
    return values.shape[0] if hasattr(values, "shape") else len(values)


def _class_ids_lazy(prediction, threshold=0.5):
    """_class_ids, without leaving the device for a tensor: the same reading, where the
    binary "any score outside [0, 1]" test picks sigmoid per batch by torch.where on the
    device instead of a Python branch (which would wait for the device)."""
    if not _is_tensor(prediction):
        return _class_ids(prediction, threshold)
    p = prediction.detach()
    shape = tuple(p.shape)
    if len(shape) == 0:
        p, shape = p.reshape(1), (1,)
    if len(shape) == 2 and shape[1] == 1:
        p, shape = p.reshape(-1), (shape[0],)
    if len(shape) == 2:
        return p.argmax(dim=1)
    if len(shape) == 1:
        if p.is_floating_point():
            import torch
            inside = ((p >= 0) & (p <= 1)).all()
            return torch.where(inside, p, p.sigmoid()) > threshold
        return p
    raise ValueError("a prediction of shape %s cannot be read as class ids: expected %s"
                     % (list(shape), _SHAPES))


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
                 epoch=None, threshold=0.5):
        """
        out_dir: directory for the dumps ({name}_epoch{e}_rank{r}.npz / .pt).
        num_classes: enables the local confusion matrix (saved as `matrix`).
        rank, world_size: default to torch.distributed's, else RANK / WORLD_SIZE, else 0 / 1.
        sampler: a torch DistributedSampler; lets the recorder flag padding duplicates
                 (position k of rank r is padding when r + k * num_replicas >= len(dataset)).
        formats: any of "npz" (needs numpy) and "pt" (torch.save of a dict of tensors).
        epoch: the epoch of the dumps; None (default) takes the sampler's `epoch` attribute
               (DistributedSampler.set_epoch), else 0. reset(epoch=) and save(epoch=) set it.
        threshold: binary scores ([N] or [N, 1] floats) above it are class 1, as in
                   torchmetrics' binary metrics.
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
        self.threshold = threshold
        self.dataloader_idx = 0  # which evaluation loader (ShardLensCallback sets these)
        self.validation = 0  # the validation's index within its epoch
        self.settings = None  # the run's settings (dict), saved as settings_json
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
        # A batch is kept as given (tensors stay on their device, unsynchronised) and read
        # once, in save(): a per-batch .cpu()/.tolist() is a host sync per batch on a GPU.
        self._chunks = []  # (index, target, prediction, flags or None, sanity, position)
        self._count = 0
        self._columns_cache = None
        self.matrix = None
        self.reported = None
        self.metrics = None  # what the callback read from torchmetrics (metrics_json)
        if epoch is not None:
            self.epoch = _check_epoch(epoch)

    @property
    def count(self):
        """Samples recorded since reset()."""
        return self._count

    def update(self, index, target, prediction, flags=None):
        """Adds one batch. prediction: class ids [N] or scores/logits [N, C]. Tensors are
        reduced to class ids on their device and stay there until save()."""
        pred = _class_ids_lazy(prediction, self.threshold)
        index, target = _flat(index), _flat(target)
        n = _length(target)
        if not (_length(index) == n == _length(pred)):
            raise ValueError("index, target and prediction lengths differ: %d, %d, %d"
                             % (_length(index), n, _length(pred)))
        if flags is not None:
            flags = _flat(flags)
            if _length(flags) != n:
                raise ValueError("flags length %d != batch length %d" % (_length(flags), n))
        self._chunks.append((index, target, pred, flags, self.sanity, self._count))
        self._count += n
        self._columns_cache = None

    def _columns(self):
        """index, target, prediction, flags of every record as numpy arrays: every tensor
        of the epoch concatenated on its device and copied to the host in one transfer."""
        import numpy as np
        if self._columns_cache is not None:
            return self._columns_cache
        chunks = self._chunks
        host = {}  # (column, chunk) -> ndarray of what was a tensor
        devices = [v for c in chunks for v in c[:4] if _is_tensor(v)]
        if devices:
            import torch
            device = devices[0].device
            keys, pieces = [], []
            for col in range(4):
                for i, c in enumerate(chunks):
                    if _is_tensor(c[col]):
                        keys.append((col, i, c[col].numel()))
                        pieces.append(c[col].reshape(-1).to(device=device, dtype=torch.int64))
            flat = torch.cat(pieces).cpu().numpy()
            at = 0
            for col, i, n in keys:
                host[(col, i)] = flat[at:at + n]
                at += n

        def column(col, dtype):
            parts = [host[(col, i)] if (col, i) in host else np.asarray(c[col], dtype=np.int64)
                     for i, c in enumerate(chunks)]
            return np.concatenate(parts).astype(dtype) if parts else np.zeros(0, dtype)

        index, target, prediction = (column(k, np.int64) for k in range(3))
        flags = np.zeros(self._count, np.uint8)
        for i, (_, _, _, given, sanity, position) in enumerate(chunks):
            n = _length(chunks[i][1])
            part = flags[position:position + n]
            if given is not None:
                part |= (host[(3, i)] if (3, i) in host else np.asarray(given)).astype(np.uint8)
            else:
                part |= self._padding_flags(np.arange(position, position + n))
            if sanity:
                part |= SANITY
        self._columns_cache = {"index": index, "target": target, "prediction": prediction,
                               "flags": flags}
        return self._columns_cache

    def _padding_flags(self, positions):
        import numpy as np
        s = self.sampler
        if s is not None and hasattr(s, "num_replicas") and hasattr(s, "dataset") and \
                not getattr(s, "drop_last", False):
            # Sampler order position of the k-th sample of rank r is r + k * W; positions
            # past len(dataset) repeat the start of the order (DistributedSampler padding).
            padded = s.rank + positions * s.num_replicas >= len(s.dataset)
            return np.where(padded, PADDING, 0).astype(np.uint8)
        return np.zeros(len(positions), np.uint8)

    # The records as Python lists (read back; save() does not need them).
    index = property(lambda self: self._columns()["index"].tolist())
    target = property(lambda self: self._columns()["target"].tolist())
    prediction = property(lambda self: self._columns()["prediction"].tolist())
    flags = property(lambda self: self._columns()["flags"].tolist())

    def set_matrix(self, matrix):
        """The rank's own accumulated confusion matrix (e.g. a metric's local state)."""
        self.matrix = matrix

    def set_reported(self, matrix):
        """The matrix the evaluation reported (after synchronization)."""
        self.reported = matrix

    def local_matrix(self):
        """Confusion matrix of this rank's records (row = target, column = prediction)."""
        return self._local_matrix().tolist()

    def _local_matrix(self):
        import numpy as np
        c = self.num_classes
        cols = self._columns()
        t, p = cols["target"], cols["prediction"]
        inside = (t >= 0) & (t < c) & (p >= 0) & (p < c)
        return np.bincount(t[inside] * c + p[inside], minlength=c * c).reshape(c, c)

    # -- saving ---------------------------------------------------------------------------
    def _arrays(self, epoch):
        """name -> (nested list or ndarray/tensor, kind) of everything the dump holds."""
        cols = self._columns()
        out = {
            "index": (cols["index"], "i8"),
            "target": (cols["target"], "i8"),
            "prediction": (cols["prediction"], "i8"),
            "flags": (cols["flags"], "u1"),
            "rank": (self.rank, "i8"),
            "world_size": (self.world_size, "i8"),
            "epoch": (epoch, "i8"),
            "dataloader_idx": (self.dataloader_idx, "i8"),
            "validation_in_epoch": (self.validation, "i8"),
        }
        if self.sanity:
            out["sanity"] = (1, "i8")
        dataset_size = self.dataset_size
        if dataset_size is None:
            dataset_size = _sampler_dataset_size(self.sampler)
        if dataset_size is not None:
            out["dataset_size"] = (dataset_size, "i8")
        if self.batch_size is not None:
            out["batch_size"] = (self.batch_size, "i8")
        if self.matrix is not None:
            out["matrix"] = (self.matrix, "m")
        elif self.num_classes is not None:
            out["matrix"] = (self._local_matrix(), "i8")
        if self.reported is not None:
            out["reported"] = (self.reported, "m")
        if self.metrics:
            # metrics_json lists them; metric<i>_state_<k> / metric<i>_compute hold the values.
            listed = []
            for i, (name, m) in enumerate(sorted(self.metrics.items())):
                entry = {"name": name, "class": m["class"], "stream": m["stream"],
                         "state": sorted(m["state"]), "compute": "metric%d_compute" % i}
                for k, v in m["state"].items():
                    out["metric%d_state_%s" % (i, k)] = (v, "m")
                out["metric%d_compute" % i] = (m["compute"], "m")
                listed.append(entry)
            out["metrics_json"] = (list(json.dumps(listed).encode("utf-8")), "u1")
        settings = self.settings if self.settings is not None else self._plain_settings(
            epoch, dataset_size)
        out["settings_json"] = (list(json.dumps(settings, sort_keys=True).encode("utf-8")), "u1")
        return out

    def _plain_settings(self, epoch, dataset_size):
        """settings_json of a dump written outside Lightning: what the sampler tells."""
        settings = {key: None for key in SETTINGS_KEYS}
        settings.update(_sampler_settings(self.sampler))
        settings.update({"framework": "torch", "batch_size": self.batch_size,
                         "sanity": bool(self.sanity), "stage": self.stage or "validate",
                         "dataloader_idx": self.dataloader_idx,
                         "validation_in_epoch": self.validation, "world_size": self.world_size,
                         "rank": self.rank, "dataset_size": dataset_size,
                         "num_classes": self.num_classes, "epoch": epoch,
                         "versions": _versions()})
        return settings

    def path(self, fmt, epoch=None):
        """{out_dir}/{name}[_{stage}][_sanity]_epoch{e}[_val{v}][_dl{d}]_rank{r}.{fmt}: the
        validation and loader parts only when not 0, so single-loader globs keep working."""
        epoch = self.current_epoch if epoch is None else _check_epoch(epoch)
        parts = [self.name]
        if self.stage:
            parts.append(self.stage)
        if self.sanity:
            parts.append("sanity")
        parts.append("epoch%d" % epoch)
        if self.validation:
            parts.append("val%d" % self.validation)
        if self.dataloader_idx:
            parts.append("dl%d" % self.dataloader_idx)
        parts.append("rank%d.%s" % (self.rank, fmt))
        return os.path.join(self.out_dir, "_".join(parts))

    def save(self, epoch=None):
        """Writes this rank's dump(s) of the current epoch; returns the paths written.
        epoch: sets the explicit epoch first (as reset(epoch=) does). With no records nothing
        is written (a dump of nothing would import as an evaluation that is exact)."""
        if epoch is not None:
            self.epoch = _check_epoch(epoch)
        if not self._count:
            warnings.warn("ShardLens: no records on rank %d, no dump written" % self.rank,
                          ShardLensWarning, stacklevel=2)
            return []
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


def _kind_name(sampler):
    """The sampler's class name, so no framework has to be imported to tell them apart."""
    return type(sampler).__name__


def _is_wrapper(sampler):
    """Lightning's DistributedSamplerWrapper: a DistributedSampler over the positions of the
    list its inner sampler yields (kept in sampler.dataset._sampler_list)."""
    return _kind_name(sampler) == "DistributedSamplerWrapper" and hasattr(sampler, "dataset")


def _is_distributed(sampler):
    return hasattr(sampler, "num_replicas") and hasattr(sampler, "rank") and \
        hasattr(sampler, "dataset")


def _sampler_dataset_size(sampler):
    """len(dataset) when the sampler knows the dataset itself (not a wrapper's inner list)."""
    if sampler is None or _is_wrapper(sampler):
        return None
    for attr in ("dataset", "data_source"):
        data = getattr(sampler, attr, None)
        if data is not None and hasattr(data, "__len__"):
            return len(data)
    return None


def _inner_kind(sampler):
    name = _kind_name(sampler)
    if name == "SequentialSampler":
        return "sequential"
    if name == "WeightedRandomSampler":
        return "weighted_random"
    return "other"


def _sampler_settings(sampler):
    """The settings_json entries a sampler tells: kind, shuffle, seed, epoch, drop_last."""
    name = _kind_name(sampler)
    out = {"sampler": "other", "inner_sampler": None, "shuffle": None, "seed": None,
           "sampler_epoch": 0, "sampler_drop_last": False}
    if sampler is None:  # not known (no loader found, or a recorder given none)
        out.update(sampler=None, sampler_epoch=None, sampler_drop_last=None)
        return out
    if name in ("SequentialSampler", "RandomSampler"):
        out["sampler"] = "none"  # no distributed sampler: every rank reads everything
        out["shuffle"] = name == "RandomSampler"
        return out
    if _is_wrapper(sampler):
        out["sampler"] = "wrapper"
        out["inner_sampler"] = _inner_kind(getattr(sampler.dataset, "_sampler", None))
    elif name == "DistributedSampler":
        out["sampler"] = "distributed"
    elif name == "UnrepeatedDistributedSampler":
        out["sampler"] = "unrepeated"
    if _is_distributed(sampler):
        out.update(shuffle=bool(getattr(sampler, "shuffle", False)),
                   seed=int(getattr(sampler, "seed", 0)),
                   sampler_epoch=int(getattr(sampler, "epoch", 0)),
                   sampler_drop_last=bool(getattr(sampler, "drop_last", False)))
    return out


def _replay_order(sampler):
    """The dataset indices this rank's sampler yields in the iteration under way, without
    drawing anything again. (Replayed, not watched: Lightning makes a loader's iterator in the
    loop's reset(), before any callback hook, and fetches an unsized loader's first batch
    there; watching would mean swapping samplers inside Lightning's loaders, in time for
    some of them only.)"""
    # How: a DistributedSampler's order is a function of (seed, epoch, len) (its own
    # generator); a wrapper's positions map through the list its inner sampler drew when this
    # iteration started (re-iterating it would draw a new one). None when the sampler's
    # order cannot be known without disturbing it.
    name = _kind_name(sampler)
    if name == "SequentialSampler":
        return list(range(len(sampler)))
    if not _is_distributed(sampler):
        return None
    try:
        from torch.utils.data import DistributedSampler
    except ImportError:
        return None
    if not isinstance(sampler, DistributedSampler):
        return None
    if _is_wrapper(sampler):
        drawn = getattr(sampler.dataset, "_sampler_list", None)
        if drawn is None:
            return None
        return [drawn[p] for p in DistributedSampler.__iter__(sampler)]
    if name != "DistributedSampler":  # a subclass may order differently
        return None
    return list(DistributedSampler.__iter__(sampler))


def _versions():
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


# -- Hugging Face Accelerate: one line around gather_for_metrics ------------------------------
def watch(accelerator, out_dir="shardlens_runs", name="eval", cli=None, fail_on_wrong=False,
          verdict=True, num_classes=None):
    """`accelerator.gather_for_metrics = shardlens_recorder.watch(accelerator, "runs/")`:
    every call records the rank's own (pre-gather) batch (predictions, targets) and Accelerate's
    even_batches padding; at the end of each evaluation loader every rank writes its dump and
    rank 0 imports, diagnoses and prints the verdict. What is passed: (predictions, targets),
    (index, predictions, targets) or a dict ("predictions"/"references"/... keys). Without an
    index the loader's order is replayed (a SequentialSampler's)."""
    return _AccelerateWatch(accelerator, out_dir, name, cli, fail_on_wrong, verdict,
                            num_classes)


class _AccelerateWatch:
    def __init__(self, accelerator, out_dir, name, cli, fail_on_wrong, verdict, num_classes):
        original = accelerator.gather_for_metrics
        self.original = getattr(original, "original", original)  # watched twice: once
        self.accelerator = accelerator
        self.recorder = ShardLensRecorder(out_dir, name=name, num_classes=num_classes,
                                          rank=accelerator.process_index,
                                          world_size=accelerator.num_processes)
        self.cli, self.fail_on_wrong, self.verdict = cli, fail_on_wrong, verdict
        self.verdicts = []
        self._said = set()
        self._loader = None
        self._evaluations = 0
        self._failed = None

    def _say(self, key, message):
        if key not in self._said:
            self._said.add(key)
            if self.accelerator.process_index == 0:
                warnings.warn("ShardLens: " + message, ShardLensWarning, stacklevel=3)

    def __call__(self, input_data, *args, **kwargs):
        try:
            self._record(input_data)
        except Exception as e:  # the user's gather goes on; this evaluation is not dumped
            self._failed = str(e)
            self._say(("record", str(e)), "%s; this evaluation is not recorded" % e)
        out = self.original(input_data, *args, **kwargs)
        if not self._failed:
            try:  # what the metric is fed: the reported matrix, kept on the device
                self._gathered.append(self._read(out)[1:])
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
        self._gathered = []  # (predictions, targets) as gather_for_metrics returned them
        batch_sampler = getattr(loader, "batch_sampler", None)
        self._batch_size = getattr(batch_sampler, "batch_size", None) or \
            getattr(loader, "total_batch_size", None)
        dataset = getattr(loader, "dataset", None)
        self._size = len(dataset) if hasattr(dataset, "__len__") else None
        self._split = bool(getattr(batch_sampler, "split_batches", False))
        rec.dataset_size, rec.batch_size = self._size, self._batch_size
        inner = getattr(getattr(batch_sampler, "batch_sampler", None), "sampler", None)
        settings = {key: None for key in SETTINGS_KEYS}
        settings.update({"framework": "accelerate", "sampler": "accelerate",
                         "inner_sampler": _inner_kind(inner) if inner is not None else None,
                         "shuffle": _kind_name(inner) != "SequentialSampler",
                         "batch_size": self._batch_size, "world_size": rec.world_size,
                         "rank": rec.rank, "dataset_size": self._size, "stage": "validate",
                         "epoch": rec.epoch, "versions": _versions()})
        rec.settings = settings
        if _kind_name(inner) == "SequentialSampler" and batch_sampler is not None:
            # This rank's batches, dealt again: a sequential order draws nothing.
            self._order = [i for batch in batch_sampler for i in batch]

    def _record(self, data):
        loader = getattr(getattr(self.accelerator, "gradient_state", None),
                         "active_dataloader", None)
        if loader is not self._loader or self._loader is None:
            self._start(loader)
        if self._failed:
            return
        index, pred, target = self._read(data)
        rec = self.recorder
        target = _flat(target)
        n = _length(target)
        if index is None:
            if self._order is None:
                raise _Unreadable("no dataset index: the loader is not sequential; pass "
                                  "(index, predictions, targets)")
            index = self._order[rec.count:rec.count + n]
        if rec.num_classes is None and _is_tensor(pred) and pred.ndim == 2:
            rec.num_classes = int(pred.shape[1])
        flags = None
        if self._batch_size and self._size is not None:
            flags = accelerate_padding_flags(self._step, rec.rank, rec.world_size,
                                             self._batch_size, self._size, n, self._split)
        rec.update(index, target, pred, flags=flags)
        self._step += 1

    @staticmethod
    def _read(data):
        """(index or None, predictions, targets) of what gather_for_metrics is given."""
        if isinstance(data, dict):
            index = _pick(data, _DEFAULT_KEYS["index"])
            pred = _pick(data, ("predictions",) + _DEFAULT_KEYS["prediction"])
            target = _pick(data, ("references",) + _DEFAULT_KEYS["target"])
        elif isinstance(data, (list, tuple)) and len(data) in (2, 3):
            index, pred, target = data if len(data) == 3 else (None,) + tuple(data)
        else:
            raise _Unreadable("gather_for_metrics got %s: pass (predictions, targets), "
                              "(index, predictions, targets) or a dict" % type(data).__name__)
        if pred is None or target is None:
            raise _Unreadable("gather_for_metrics got no predictions/targets (keys %s)"
                              % sorted(map(str, data)))
        return index, pred, target

    def _reported(self):
        """The matrix of everything gather_for_metrics returned: one bincount, one transfer."""
        import torch
        if not self._gathered:
            return None
        preds = torch.cat([_class_ids_lazy(p, self.recorder.threshold).reshape(-1).long()
                           for p, _ in self._gathered])
        target = torch.cat([_flat(t).long() for _, t in self._gathered])
        c = self.recorder.num_classes
        if c is None:  # class ids were gathered, not scores: the largest id seen tells
            c = self.recorder.num_classes = int(torch.maximum(preds.max(), target.max())) + 1
        inside = (target >= 0) & (target < c) & (preds >= 0) & (preds < c)
        return torch.bincount((target * c + preds)[inside], minlength=c * c).reshape(c, c).cpu()

    def _finish(self):
        """Every rank writes its dump and waits for the others; rank 0 gives the verdict."""
        rec, acc = self.recorder, self.accelerator
        self._loader = None
        written = []
        try:
            if not self._failed and rec.count:
                rec.set_reported(self._reported())
                if rec.settings is not None and rec.num_classes is not None:
                    rec.settings["num_classes"] = rec.num_classes
                written = rec.save()
        except Exception as e:
            self._say(("save", str(e)), "cannot write the dump: %s" % e)
        acc.wait_for_everyone()
        failure = None
        if acc.process_index == 0 and self.verdict and written:
            try:
                cli = _find_cli(self.cli)
                if cli is None:
                    self._say("cli", "shardlens-cli not found (cli=, $SHARDLENS_CLI or PATH): "
                              "the dumps are written, no verdict")
                else:
                    stem, ext = written[0].rsplit("_rank", 1)[0], os.path.splitext(written[0])[1]
                    files = ["%s_rank%d%s" % (stem, r, ext) for r in range(rec.world_size)]
                    missing = [f for f in files if not os.path.exists(f)]
                    if missing:
                        self._say(("missing", stem), "no verdict: no dump from %s" % ", ".join(
                            os.path.basename(m) for m in missing))
                    else:
                        v = _judge(cli, files, stem + ".slrun")
                        self.verdicts.append(v)
                        if getattr(acc, "trackers", None):
                            acc.log({"shardlens/" + k: float(v[k]) for k in
                                     ("rows_wrong", "duplicates", "never_evaluated")})
                        if not (v["correct"] and not v["patterns"]):
                            failure = v["line"]
            except Exception as e:
                self._say(("verdict", str(e)), "no verdict: %s" % e)
        if self.fail_on_wrong:
            import torch.distributed as dist
            if dist.is_available() and dist.is_initialized():
                box = [failure]
                dist.broadcast_object_list(box, src=0)
                failure = box[0]
            if failure:
                raise ShardLensVerdictError(failure)

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


# -- torchmetrics: what an unchanged LightningModule's metrics see ----------------------------
# Class name -> how its update() turns preds into class ids (torchmetrics 1.x: multiclass
# metrics take argmax over dim 1 when preds has one more dimension than target; binary ones
# apply sigmoid when any score lies outside [0, 1], then > threshold).
_KNOWN_METRICS = {
    "MulticlassConfusionMatrix": "multiclass", "MulticlassAccuracy": "multiclass",
    "MulticlassF1Score": "multiclass", "MulticlassFBetaScore": "multiclass",
    "MulticlassPrecision": "multiclass", "MulticlassRecall": "multiclass",
    "MulticlassStatScores": "multiclass",
    "BinaryConfusionMatrix": "binary", "BinaryAccuracy": "binary", "BinaryF1Score": "binary",
    "BinaryFBetaScore": "binary", "BinaryPrecision": "binary", "BinaryRecall": "binary",
    "BinaryStatScores": "binary",
}
# Metrics whose compute() is the confusion matrix itself: the reported matrix.
_MATRIX_METRICS = ("MulticlassConfusionMatrix", "BinaryConfusionMatrix")


def _is_torchmetric(module):
    return any(k.__name__ == "Metric" and k.__module__.startswith("torchmetrics")
               for k in type(module).__mro__)


def _metric_kind(metric):
    """(known class name, "multiclass" | "binary"), or (None, None) for a metric not read."""
    for k in type(metric).__mro__:
        if k.__name__ in _KNOWN_METRICS and k.__module__.startswith("torchmetrics"):
            return k.__name__, _KNOWN_METRICS[k.__name__]
    return None, None


class _Watched:
    """One metric instance whose bound update() the callback wraps for one evaluation."""

    def __init__(self, name, metric, cls, kind):
        self.name, self.metric, self.cls, self.kind = name, metric, cls, kind
        self.original = None  # the instance's own update (torchmetrics' wrapped one)
        self.loader = None  # the dataloader_idx whose batches updated it
        self.failed = None

    @property
    def num_classes(self):
        return 2 if self.kind == "binary" else getattr(self.metric, "num_classes", None)


class _MetricWatch:
    """Wraps the update() of every known torchmetrics metric of a LightningModule for one
    evaluation and keeps, per batch, the (target, class ids) each saw, on their device.
    The wrapper is an instance attribute over torchmetrics' own (itself an instance
    attribute set in Metric.__init__), so forward(), MetricCollection and direct update()
    calls all pass through it, and restoring it leaves the metric as it was."""

    def __init__(self):
        self.watched = []
        self.unknown = []  # (name, class) of metrics the callback does not read
        self.pending = {}  # name -> [(target, ids)] of the batch under way
        self._memo = []  # (preds, kind, threshold, ids): one reduction per tensor per batch

    def attach(self, module):
        for name, m in module.named_modules():
            if not _is_torchmetric(m):
                continue
            cls, kind = _metric_kind(m)
            if cls is None:
                self.unknown.append((name, type(m).__name__))
                continue
            w = _Watched(name, m, cls, kind)
            if getattr(m, "ignore_index", None) is not None:
                w.failed = ("%s (%s) has ignore_index=%s: it drops samples, so its records "
                            "cannot be matched to dataset indices" % (name, cls, m.ignore_index))
            w.original = m.__dict__.get("update")
            if w.original is None:  # not torchmetrics' instance-level wrapper: leave it
                continue
            m.update = self._wrapper(w)
            self.watched.append(w)

    def detach(self):
        for w in self.watched:
            if w.original is not None:
                w.metric.update = w.original
        self.watched, self.pending, self._memo = [], {}, []

    def _wrapper(self, w):
        def update(*args, **kwargs):
            if w.failed is None:
                try:
                    args, kwargs = self._seen(w, args, kwargs)
                except Exception as e:  # said by the callback; never the user's error
                    w.failed = "%s (%s): %s" % (w.name, w.cls, e)
            return w.original(*args, **kwargs)
        return update

    def _seen(self, w, args, kwargs):
        """Records the batch's (target, class ids) and returns the arguments to pass on.
        A multiclass metric given scores gets the class ids the callback computed instead:
        torchmetrics would take the same argmax over dim 1 of the same tensor first, so its
        state is the same, and the argmax is computed once for the batch, not once more for
        ShardLens (at 1000 classes the argmax is most of the recording's cost)."""
        preds = args[0] if args else kwargs.get("preds")
        target = args[1] if len(args) > 1 else kwargs.get("target")
        if not (_is_tensor(preds) and _is_tensor(target)):
            raise ValueError("update() got no (preds, target) tensors")
        threshold = getattr(w.metric, "threshold", 0.5)
        for p, kind, thr, ids in self._memo:
            if p is preds and kind == w.kind and thr == threshold:
                break
        else:
            ids = self._reduce(w, preds.detach(), target, threshold)
            self._memo.append((preds, w.kind, threshold, ids))
        self.pending.setdefault(w.name, []).append((target.detach().reshape(-1), ids))
        if w.kind == "multiclass" and preds.ndim == 2 and target.ndim == 1 and \
                getattr(w.metric, "top_k", 1) in (None, 1) and \
                preds.shape[1] == getattr(w.metric, "num_classes", None) and \
                not preds.requires_grad:
            # Class ids in place of scores: only where torchmetrics' result cannot differ
            # (top-1, the metric's own class count; a wrong shape still reaches its checks).
            if args:
                args = (ids,) + tuple(args[1:])
            else:
                kwargs = dict(kwargs, preds=ids)
        return args, kwargs

    @staticmethod
    def _reduce(w, preds, target, threshold):
        if w.kind == "multiclass":
            if preds.ndim == target.ndim + 1:
                preds = preds.argmax(dim=1)
            if preds.ndim != 1 or target.ndim != 1:
                raise ValueError("multidimensional inputs (preds %s, target %s): one record "
                                 "per sample is needed" % (list(preds.shape), list(target.shape)))
            return preds
        if preds.numel() != target.numel() or target.ndim > 1 and target.shape[1:].numel() > 1:
            raise ValueError("multidimensional binary inputs (preds %s, target %s)"
                             % (list(preds.shape), list(target.shape)))
        preds = preds.reshape(-1)
        if preds.is_floating_point():
            import torch
            inside = ((preds >= 0) & (preds <= 1)).all()  # stays on the device: no sync
            preds = torch.where(inside, preds, preds.sigmoid()) > threshold
        return preds

    def take(self):
        """The batch's {name: [(target, ids)]}, cleared for the next batch."""
        pending, self.pending, self._memo = self.pending, {}, []
        return pending

    def stream(self, pending):
        """The metric whose inputs a loader records: a confusion matrix first (its compute()
        is the reported matrix), else the first metric updated, in the module's order."""
        order = [w for w in self.watched if w.name in pending and w.failed is None]
        for w in order:
            if w.cls in _MATRIX_METRICS:
                return w
        return order[0] if order else None

    def results(self):
        """[(watched, local state {name: tensor on the host}, compute() on the host)] of every
        metric updated in this evaluation. compute() syncs across ranks (all_gather), so every
        rank calls it on the same metrics in the same order; the result is cached by
        torchmetrics, so the module's own compute() returns it without a second sync."""
        out = []
        for w in self.watched:
            m = w.metric
            if int(getattr(m, "_update_count", 0) or 0) == 0:
                continue
            state = {}
            for k in getattr(m, "_defaults", {}):
                v = getattr(m, k, None)
                if _is_tensor(v):
                    state[k] = v.detach().cpu()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = m.compute()
            if _is_tensor(value):
                value = value.detach().cpu()
            out.append((w, state, value))
        return out

# -- the verdict: rank 0 imports every rank's dump and diagnoses it --------------------------
def _find_cli(cli):
    """The shardlens-cli to run: cli=, else $SHARDLENS_CLI, else the one on PATH, or None."""
    import shutil
    for candidate in (cli, os.environ.get("SHARDLENS_CLI"), shutil.which("shardlens-cli")):
        if candidate and os.path.exists(candidate):
            return candidate
    return None


def _wait_for(paths, timeout):
    """Without torch.distributed, rank 0 polls until every rank's dump exists (atomic
    renames: a path that exists is complete)."""
    import time
    deadline = time.time() + timeout
    while time.time() < deadline:
        if all(os.path.exists(p) for p in paths):
            return []
        time.sleep(0.05)
    return [p for p in paths if not os.path.exists(p)]


def _run_json(cli, *args):
    import subprocess
    proc = subprocess.run([cli, *args, "--format", "json"], capture_output=True, text=True)
    if proc.returncode not in (0, 1):  # diagnose exits 1 on a wrong matrix
        raise RuntimeError("%s %s exited %d: %s" % (os.path.basename(cli), args[0],
                                                    proc.returncode, proc.stderr.strip()[-500:]))
    return json.loads(proc.stdout) if proc.stdout.strip() else {}


def _verdict_of(report, run):
    """rows_wrong, duplicates, never_evaluated, patterns and the one line printed."""
    if "epochs" in report and report["epochs"]:
        report = report["epochs"][0]
    rows = report.get("row_sums") or {}
    summary = report.get("summary") or {}
    v = {"rows_wrong": len(rows.get("mismatched") or []),
         "duplicates": int(summary.get("duplicated_samples") or 0),
         "never_evaluated": int(summary.get("missing_samples") or 0),
         "patterns": sorted({d.get("pattern") for d in report.get("diagnosis") or []
                             if d.get("pattern")}),
         "correct": bool(report.get("correct")), "classes": report.get("classes"),
         "synced": report.get("synced"), "expected": report.get("expected") or
         report.get("expected_distinct"), "run": run}
    if v["correct"] and not v["patterns"]:
        v["line"] = "ShardLens: the reported matrix is exact (%s classes); see %s" % (
            v["classes"], run)
    else:
        v["line"] = "ShardLens: %d of %s rows != class counts, %d duplicated, %d never " \
            "evaluated: %s; see %s" % (v["rows_wrong"], v["classes"], v["duplicates"],
                                       v["never_evaluated"],
                                       ", ".join(v["patterns"]) or "no pattern named", run)
    return v


def _judge(cli, files, run, say=None):
    """Imports one evaluation's dumps (every rank's) into RUN, diagnoses it, prints the line
    (through say, e.g. a progress bar's print, so it gets a line of its own)."""
    _run_json(cli, "import", *files, "--out", run)
    v = _verdict_of(_run_json(cli, "diagnose", "--run", run), run)
    (say or (lambda line: print(line, flush=True)))(v["line"])
    return v


def _heatmap(synced, expected, cell=16):
    """An RGB uint8 image (H, W, 3) of synced - expected: red where the synced matrix counts
    more, blue where fewer, white where equal (numpy only)."""
    import numpy as np
    s = np.asarray(synced, dtype=np.float64)
    e = np.asarray(expected, dtype=np.float64) if expected is not None else np.zeros_like(s)
    d = s - e
    scale = max(float(np.abs(d).max()), 1.0)
    t = d / scale
    rgb = np.ones(d.shape + (3,))
    rgb[..., 1] -= np.abs(t)
    rgb[..., 2] -= np.clip(t, 0, 1)
    rgb[..., 0] -= np.clip(-t, 0, 1)
    cell = max(1, min(cell, 1024 // max(1, d.shape[0])))
    return (np.kron(rgb, np.ones((cell, cell, 1))) * 255).astype(np.uint8)

_DEFAULT_KEYS = {
    "prediction": ("prediction", "preds", "pred", "logits", "probs", "y_hat", "output"),
    "target": ("target", "targets", "y", "label", "labels"),
    "index": ("index", "indices", "idx"),
}


class _Unreadable(Exception):
    """A batch the callback cannot record; its message says what to change."""


def _pick(mapping, names):
    for name in names:
        if name in mapping:
            return mapping[name]
    return None


def _limit_text(limit):
    """Lightning's limit as the user wrote it: 1.0 (a float) is every batch, 1 one batch."""
    if limit is None:
        return None
    if isinstance(limit, float):
        return "all" if limit == 1.0 else repr(limit)
    return str(limit)


def _count(value):
    """An int for settings_json; Lightning keeps -1 sanity steps as float('inf')."""
    if value is None:
        return None
    if isinstance(value, float) and value == float("inf"):
        return -1
    return int(value)


class _Part:
    """One evaluation loader of one validation: its recorder, loader and sampler order."""

    def __init__(self, recorder, loader, sampler):
        self.recorder = recorder
        self.loader = loader
        self.sampler = sampler
        self.order = None  # replayed dataset indices, on the first batch that needs them
        self.stream = None  # the _Watched metric whose inputs this loader records
        self.failed = None  # why this part is not saved


class ShardLensCallback(_CallbackBase):
    """A Lightning callback recording every validation/test batch; each rank saves one dump
    per evaluation: stage, sanity check, epoch, validation within the epoch and loader.

    ShardLensCallback("runs/") (a directory, or a ShardLensRecorder) on an unchanged module:
    during each evaluation the update() of every torchmetrics classification metric of the
    module (_KNOWN_METRICS) is wrapped, and what the first confusion matrix (else the first
    metric) updated in a batch saw is recorded; every updated metric's per-rank state and
    synced compute() go into the dump (metrics_json), a confusion matrix's compute() as the
    reported matrix. metrics=False, or keys= / batch_target=, reads validation_step's return
    value instead (below). verdict=True: after each validation (not the sanity check) rank 0
    imports the ranks' dumps into {stem}.slrun with shardlens-cli (cli=, $SHARDLENS_CLI or
    PATH), diagnoses it, prints one line and logs shardlens/* to the Trainer's loggers;
    fail_on_wrong=True then raises ShardLensVerdictError on every rank when it is wrong.

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
    dump is then not written (never a dump that would read as exact) and fit goes on.

    Dumps: {name}[_test][_sanity]_epoch{e}[_val{v}][_dl{d}]_rank{r}, with settings_json (the
    sampler, seed, limits, ... of the loader in use). The first loader is recorded into
    `recorder` itself (set_reported in on_validation_epoch_end lands in its dump: the dump is
    written in on_validation_end, after the LightningModule's on_validation_epoch_end); loader
    d into recorders[d].

    stages: any of "validate" and "test". sanity: False skips the sanity check.
    """

    def __init__(self, recorder="shardlens_runs", stages=("validate", "test"), sanity=True,
                 keys=None, batch_target=None, threshold=None, metrics=None, verdict=True,
                 cli=None, fail_on_wrong=False, wait_timeout=120.0):
        super().__init__()
        self.verdict = verdict  # rank 0 imports and diagnoses each validation's dumps
        self.cli = cli
        self.fail_on_wrong = fail_on_wrong
        self.wait_timeout = wait_timeout
        self.verdicts = []  # rank 0: what each diagnosed evaluation said
        if isinstance(recorder, (str, bytes, os.PathLike)):  # ShardLensCallback("runs/")
            recorder = ShardLensRecorder(os.fspath(recorder))
        # What the module's torchmetrics metrics see is read unless told otherwise: metrics=
        # False, or keys= / batch_target= (which name what validation_step returns).
        if metrics is None:
            metrics = keys is None and batch_target is None
        self.metrics = metrics
        self._watch = None
        unknown = set(stages) - {"validate", "test"}
        if unknown:
            raise ValueError("unknown stages: %s" % sorted(unknown))
        unknown = set(keys or {}) - set(_DEFAULT_KEYS)
        if unknown:
            raise ValueError("unknown keys: %s (known: %s)" % (sorted(unknown),
                                                                sorted(_DEFAULT_KEYS)))
        self.recorder = recorder
        self.stages = tuple(stages)
        self.sanity = sanity
        self.keys = dict(_DEFAULT_KEYS)
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
        self._said = set()
        self._trainer = None
        self._stage = None

    # -- saying what went wrong, once, on rank 0 -------------------------------------------
    def _say(self, key, message):
        if key in self._said:
            return
        self._said.add(key)
        if int(getattr(self._trainer, "global_rank", 0) or 0) == 0:
            warnings.warn("ShardLens: " + message, ShardLensWarning, stacklevel=3)

    # -- the loaders in use ----------------------------------------------------------------
    def _loader(self, trainer, dataloader_idx):
        """The loader of the evaluation running now. trainer.val_dataloaders answers with
        the fit loop's loaders even inside trainer.validate(dataloaders=X), so the running
        loop's own loaders come first (Trainer._evaluation_loop, private in Lightning 2.x)."""
        loaders = None
        try:
            loop = trainer._evaluation_loop
            combined = getattr(loop, "_combined_loader", None)
            loaders = list(combined.flattened) if combined is not None else None
        except Exception:  # not Lightning 2.x, or outside its loop
            loaders = None
        if loaders is None:
            try:
                loaders = getattr(trainer, "test_dataloaders" if self._stage == "test"
                                  else "val_dataloaders", None)
            except Exception:
                loaders = None
            if isinstance(loaders, dict):
                loaders = list(loaders.values())
            elif loaders is not None and not isinstance(loaders, (list, tuple)):
                loaders = [loaders]
        if loaders is None or not 0 <= dataloader_idx < len(loaders):
            return None
        return loaders[dataloader_idx]

    @staticmethod
    def _loader_sampler(loader):
        """The sampler whose order the loader's batches follow."""
        batch_sampler = getattr(loader, "batch_sampler", None)
        sampler = getattr(batch_sampler, "sampler", None)
        return sampler if sampler is not None else getattr(loader, "sampler", None)

    def _settings(self, trainer, part, dataloader_idx):
        rec, loader, sampler = part.recorder, part.loader, part.sampler
        settings = {key: None for key in SETTINGS_KEYS}
        settings.update(_sampler_settings(sampler))
        testing = self._stage == "test"
        batch_sampler = getattr(loader, "batch_sampler", None)
        batch_size = getattr(loader, "batch_size", None)
        if batch_size is None:
            batch_size = getattr(batch_sampler, "batch_size", self._user_sizes[1])
        dataset = getattr(loader, "dataset", None)
        dataset_size = self._user_sizes[0]
        if dataset_size is None and dataset is not None and hasattr(dataset, "__len__"):
            dataset_size = len(dataset)  # the user's dataset, also under the wrapper
        if dataset_size is None:
            dataset_size = _sampler_dataset_size(sampler)
        settings.update({
            "framework": "lightning",
            "loader_drop_last": bool(getattr(loader, "drop_last",
                                             getattr(batch_sampler, "drop_last", False))),
            "batch_size": batch_size,
            "limit_batches": _limit_text(getattr(trainer, "limit_test_batches" if testing
                                                 else "limit_val_batches", None)),
            "sanity_steps": _count(getattr(trainer, "num_sanity_val_steps", None)),
            "sanity": bool(rec.sanity),
            "stage": "test" if testing else "validate",
            "dataloader_idx": dataloader_idx,
            "validation_in_epoch": rec.validation,
            "val_check_interval": None if getattr(trainer, "val_check_interval", None) is None
            else str(trainer.val_check_interval),
            "world_size": rec.world_size,
            "rank": rec.rank,
            "dataset_size": dataset_size,
            "num_classes": rec.num_classes,
            "epoch": int(getattr(trainer, "current_epoch", 0) or 0),
            "global_step": int(getattr(trainer, "global_step", 0) or 0),
            "versions": _versions(),
        })
        return settings

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
        loader = self._loader(trainer, dataloader_idx)
        sampler = main.sampler if self._own_sampler else self._loader_sampler(loader)
        rec.sampler = sampler if sampler is not None and _is_distributed(sampler) else None
        part = _Part(rec, loader, sampler)
        settings = self._settings(trainer, part, dataloader_idx)
        rec.settings = settings
        rec.dataset_size = settings["dataset_size"]
        rec.batch_size = settings["batch_size"]
        self._parts[dataloader_idx] = part
        self.recorders[dataloader_idx] = rec
        return part

    # -- reading a batch -------------------------------------------------------------------
    def _batch_target(self, batch):
        if self.batch_target is not None:
            return self.batch_target(batch)
        if isinstance(batch, dict):
            return _pick(batch, self.keys["target"])
        if isinstance(batch, (list, tuple)) and len(batch) >= 2:
            return batch[-1]
        return None

    def _read(self, outputs, batch):
        """(index or None, target, prediction) of one batch, or _Unreadable."""
        index = target = pred = None
        if isinstance(outputs, dict):
            pred = _pick(outputs, self.keys["prediction"])
            target = _pick(outputs, self.keys["target"])
            index = _pick(outputs, self.keys["index"])
            if pred is None:
                raise _Unreadable(
                    "validation_step returned a dict without a prediction (keys %s; looked "
                    "for %s): name it with ShardLensCallback(keys={'prediction': ...})"
                    % (sorted(map(str, outputs)), "/".join(self.keys["prediction"])))
        elif isinstance(outputs, (list, tuple)) and len(outputs) in (2, 3):
            if len(outputs) == 2:
                pred, target = outputs
            else:
                index, pred, target = outputs
        elif hasattr(outputs, "shape") and len(outputs.shape) == 0:
            raise _Unreadable(
                "validation_step returned a scalar (a loss?): return the predictions (a "
                "tensor), a tuple (preds, target), or a dict with a prediction and a target")
        elif hasattr(outputs, "shape"):
            pred = outputs
        else:
            raise _Unreadable(
                "validation_step returned %s: return the predictions (a tensor), a tuple "
                "(preds, target), or a dict with a prediction and a target"
                % ("None" if outputs is None else type(outputs).__name__))
        if target is None:
            target = self._batch_target(batch)
            if target is None:
                raise _Unreadable(
                    "no targets: neither the step's output nor the batch (%s) holds them; "
                    "return them (keys={'target': ...}) or pass batch_target=" % (
                        type(batch).__name__))
        if index is None and isinstance(batch, dict):
            index = _pick(batch, self.keys["index"])
        return index, target, pred

    def _indices(self, part, count):
        """Dataset indices of the next `count` records of this loader, from its sampler."""
        if part.order is None:
            part.order = _replay_order(part.sampler) if part.sampler is not None else None
            if part.order is None:
                raise _Unreadable(
                    "no dataset index: validation_step returns none and the loader's "
                    "sampler (%s) cannot be replayed; return the index (IndexedDataset, "
                    "keys={'index': ...})" % _kind_name(part.sampler))
        start = part.recorder.count
        if start + count > len(part.order):
            raise _Unreadable("the loader yielded more samples (%d) than its sampler orders "
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
            return
        if part.failed:
            return
        try:
            if self._record_metric_inputs(part, d):
                return
            index, target, pred = self._read(outputs, batch)
            ids = _class_ids_lazy(pred, part.recorder.threshold)
            target = _flat(target)
            if _length(ids) != _length(target):
                raise _Unreadable("%d predictions for %d targets (prediction shape %s)" % (
                    _length(ids), _length(target),
                    list(getattr(pred, "shape", [_length(ids)]))))
            if index is None:
                index = self._indices(part, _length(target))
            part.recorder.update(index, target, ids)
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
            raise _Unreadable(w.failed)
        if w.name not in pending:
            raise _Unreadable("%s (%s) was not updated in a batch of dataloader %d" % (
                w.name, w.cls, d))
        rec = part.recorder
        if rec.num_classes is None and w.num_classes is not None:
            rec.num_classes = int(w.num_classes)
            if rec.settings is not None:
                rec.settings["num_classes"] = rec.num_classes
        for target, ids in pending[w.name]:
            rec.update(self._indices(part, _length(target)), target, ids)
        return True

    def _metric_results(self):
        """Every updated metric's per-rank state and synced compute(), into the dump of the
        loader that updated it; a confusion-matrix stream's compute() is the reported one."""
        if not self._recording or self._watch is None:
            return
        try:
            results = self._watch.results()
        except Exception as e:
            self._say(("compute", str(e)), "reading the metrics' compute() failed: %s; "
                      "the dumps hold no reported matrix" % e)
            return
        for w, state, value in results:
            part = self._parts.get(w.loader if w.loader is not None else 0)
            if part is None or part.recorder is None:
                continue
            rec = part.recorder
            if rec.metrics is None:
                rec.metrics = {}
            rec.metrics[w.name] = {"class": w.cls, "state": state, "compute": value,
                                   "stream": part.stream is w}
            if part.stream is w and w.cls in _MATRIX_METRICS:
                rec.set_reported(value)

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
        if self.metrics and pl_module is not None:
            self._watch = _MetricWatch()
            try:
                self._watch.attach(pl_module)
            except Exception as e:
                self._detach()
                self._say(("attach", str(e)), "cannot watch the module's metrics: %s" % e)
            for name, cls in (self._watch.unknown if self._watch else []):
                self._say(("unknown", name), "metric %s (%s) is not one ShardLens reads "
                          "(%s): it is not recorded" % (name, cls, ", ".join(
                              sorted(_KNOWN_METRICS))))
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
        if self._watch is not None:
            for w in self._watch.watched:
                if w.failed:
                    self._say(("metric", w.name), "%s; not recorded" % w.failed)
            self._watch.detach()
            self._watch = None

    def _conclude(self, trainer, pl_module, written):
        """Every rank: wait until all dumps are written; rank 0: import, diagnose, log and
        print; with fail_on_wrong every rank stops with rank 0's diagnosis."""
        if not self.verdict or written is None or getattr(trainer, "sanity_checking", False):
            return  # the sanity check's few batches are recorded, not judged
        dist = None
        try:
            import torch.distributed as dist
            if not (dist.is_available() and dist.is_initialized()):
                dist = None
        except ImportError:
            pass
        if dist is not None:
            dist.barrier()  # every rank's dump is renamed into place before rank 0 reads
        failure = None
        if int(getattr(trainer, "global_rank", 0) or 0) == 0:
            try:
                failure = self._diagnose(trainer, pl_module, written, dist is None)
            except Exception as e:  # the verdict is a service: it never stops fit itself
                self._say(("verdict", str(e)), "no verdict: %s" % e)
        if self.fail_on_wrong:
            if dist is not None:
                box = [failure]
                dist.broadcast_object_list(box, src=0)
                failure = box[0]
            if failure:
                raise ShardLensVerdictError(failure)

    def _diagnose(self, trainer, pl_module, written, poll):
        cli = _find_cli(self.cli)
        if cli is None:
            self._say("cli", "shardlens-cli not found (cli=, $SHARDLENS_CLI or PATH): the "
                      "dumps are written, no verdict is printed or logged")
            return None
        world = int(getattr(trainer, "world_size", 1) or 1)
        failures = []
        for path in written:
            if not path.endswith(".npz") and path[:-3] + ".npz" in written:
                continue  # one verdict per evaluation, from the .npz when both are written
            stem, ext = path.rsplit("_rank", 1)[0], os.path.splitext(path)[1]
            files = ["%s_rank%d%s" % (stem, r, ext) for r in range(world)]
            missing = _wait_for(files, self.wait_timeout if poll else 0)
            if missing:
                self._say(("missing", stem), "no verdict for %s: no dump from %s" % (
                    os.path.basename(stem), ", ".join(os.path.basename(m) for m in missing)))
                continue
            bar = getattr(trainer, "progress_bar_callback", None)
            v = _judge(cli, files, stem + ".slrun", getattr(bar, "print", None))
            self.verdicts.append(v)
            self._log(trainer, v)
            if not (v["correct"] and not v["patterns"]):
                failures.append(v["line"])
        return "\n".join(failures) or None

    def _log(self, trainer, v):
        """The verdict through the Trainer's loggers (TensorBoard, CSV, W&B, ...)."""
        step = int(getattr(trainer, "global_step", 0) or 0)
        scalars = {"shardlens/" + k: float(v[k])
                   for k in ("rows_wrong", "duplicates", "never_evaluated")}
        text = ", ".join(v["patterns"]) or "none"
        for logger in getattr(trainer, "loggers", None) or []:
            try:
                logger.log_metrics(scalars, step=step)
                experiment = getattr(logger, "experiment", None)
                if hasattr(experiment, "add_text"):
                    experiment.add_text("shardlens/patterns", text, step)
                if hasattr(experiment, "add_image") and v["synced"] is not None:
                    experiment.add_image("shardlens/synced_minus_expected",
                                         _heatmap(v["synced"], v["expected"]), step,
                                         dataformats="HWC")
            except Exception as e:
                self._say(("log", type(logger).__name__),
                          "cannot log the verdict to %s: %s" % (type(logger).__name__, e))

    def _end(self):
        self._detach()
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
                    written += rec.save()
                except Exception as e:  # a full disk, a read-only directory: fit goes on
                    partial = [rec.path(f) for f in rec.formats if os.path.exists(rec.path(f))]
                    for path in partial:  # one format written, the other not: neither
                        os.unlink(path)
                    self._say(("save", d), "cannot write the dump of dataloader %d (%s): %s; "
                              "this evaluation is not recorded" % (d, rec.path(rec.formats[0]), e))
            if not self._parts:
                self._say("nothing", "no %s batch reached the callback: no dump" % self._stage)
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
        self._start(trainer, "validate", pl_module)

    def on_validation_epoch_end(self, trainer, pl_module):
        # Callbacks' hooks run before the LightningModule's: its metrics still hold the
        # evaluation's state here, before the module's own compute() and reset().
        self._metric_results()

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                                dataloader_idx=0):
        self._batch(trainer, outputs, batch, dataloader_idx)

    def on_validation_end(self, trainer, pl_module):
        self._conclude(trainer, pl_module, self._end())

    def on_test_epoch_start(self, trainer, pl_module):
        self._start(trainer, "test", pl_module)

    def on_test_epoch_end(self, trainer, pl_module):
        self._metric_results()

    def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                          dataloader_idx=0):
        self._batch(trainer, outputs, batch, dataloader_idx)

    def on_test_end(self, trainer, pl_module):
        self._conclude(trainer, pl_module, self._end())

    def on_exception(self, trainer, pl_module, exception):
        self._detach()  # the metrics get their own update() back
