"""The recorder: one rank's records of one evaluation, kept on their device until one
transfer at save(), and the dump format (see the package docstring)."""
import copy
import json
import os
import tempfile
import warnings

from ._blocks import Blocks


PADDING = 1  # a DistributedSampler padding duplicate
SANITY = 2  # evaluated during Lightning's sanity check

# The keys of a dump's settings_json (UTF-8 JSON, uint8 array), what `shardlens-cli import`
# reads to re-simulate the run; null where unknown.
SETTINGS_KEYS = ("framework", "sampler", "inner_sampler", "shuffle", "seed", "sampler_epoch",
                 "sampler_drop_last", "loader_drop_last", "batch_size", "limit_batches",
                 "sanity_steps", "sanity", "stage", "dataloader_idx", "validation_in_epoch",
                 "val_check_interval", "world_size", "rank", "dataset_size", "num_classes",
                 "epoch", "global_step", "even_batches", "split_batches", "accelerate_input",
                 "accelerate_shuffle", "versions")


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


def argmax_ids(scores):
    """torch.argmax(scores, dim=1) of a [N, C] tensor, read as torchmetrics reads it: the
    first maximum of each row, the first NaN where a row has one. A float32/float64 tensor
    on the CPU goes through numpy's argmax, which gives the same index and is vectorized:
    torch 2.x's CPU argmax over rows of 1000 scores costs about 1.4 us a row, numpy's 0.1 us,
    and at 1000 classes that difference was most of what recording cost a loop."""
    import torch
    if scores.device.type == "cpu" and scores.dtype in (torch.float32, torch.float64) \
            and not scores.requires_grad:
        try:
            return torch.from_numpy(scores.numpy().argmax(axis=1))
        except (RuntimeError, TypeError):  # a tensor numpy cannot view (conj/neg bits)
            pass
    return scores.argmax(dim=1)


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
        return argmax_ids(p)
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
        num_classes: the class count, saved in settings_json (a class no record shows still
                     counts); local_matrix() gives the records' confusion matrix.
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
        # Tensors stay on their device, unsynchronised, copied into _blocks as they come
        # (see _blocks.py), and are read once, in save(): a per-batch .cpu()/.tolist() is a
        # host sync per batch on a GPU. Lists and arrays are kept as given.
        self._blocks = Blocks()
        # (where, flags given, sanity, position, length): where = ("blocks", (block, start))
        # or ("values", (index, target, prediction, flags or None))
        self._chunks = []
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
        values = (index, target, pred) + (() if flags is None else (flags,))
        if _is_tensor(pred) and all(_is_tensor(v) and v.device == pred.device for v in values):
            where = ("blocks", self._blocks.append(values))
        else:
            where = ("values", (index, target, pred, flags))
        self._chunks.append((where, flags is not None, self.sanity, self._count, n))
        self._count += n
        self._columns_cache = None

    def _columns(self):
        """index, target, prediction, flags of every record as numpy arrays: every tensor
        of the epoch concatenated on its device and copied to the host in one transfer."""
        import numpy as np
        if self._columns_cache is not None:
            return self._columns_cache
        chunks = self._chunks
        blocks = self._blocks.to_host()  # one transfer per device
        host = {}  # (column, chunk) -> ndarray of what was a tensor of "values"
        pieces, keys = [], []
        for i, ((kind, where), *_rest) in enumerate(chunks):
            for col, v in enumerate(where if kind == "values" else ()):
                if _is_tensor(v):
                    keys.append((col, i, v.numel()))
                    pieces.append(v)
        if pieces:  # tensors on several devices, or beside lists: one transfer, as before
            import torch
            device = pieces[0].device
            flat = torch.cat([p.reshape(-1).to(device=device, dtype=torch.int64)
                              for p in pieces]).cpu().numpy()
            at = 0
            for col, i, n in keys:
                host[(col, i)] = flat[at:at + n]
                at += n

        def part(col, i):
            (kind, where), _, _, _, n = chunks[i]
            if kind == "blocks":
                k, start = where
                return blocks[k][col, start:start + n]
            if (col, i) in host:
                return host[(col, i)]
            return np.asarray(where[col], dtype=np.int64)

        def column(col, dtype):
            parts = [part(col, i) for i in range(len(chunks))]
            return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)

        index, target, prediction = (column(k, np.int64) for k in range(3))
        flags = np.zeros(self._count, np.uint8)
        for i, (_, given, sanity, position, n) in enumerate(chunks):
            out = flags[position:position + n]
            if given:
                out |= part(3, i).astype(np.uint8)
            else:
                out |= self._padding_flags(np.arange(position, position + n))
            if sanity:
                out |= SANITY
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
        # Only a matrix the rank accumulated itself (set_matrix): one computed here from the
        # records would say nothing the records do not, and at 1000 classes its 8 MB were
        # most of what save() cost and 50 times the records of an ImageNet rank's shard.
        if self.matrix is not None:
            out["matrix"] = (self.matrix, "m")
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
            # copy=False: at 1000 classes a copy of the 8 MB matrix was a tenth of save()
            if kind == "m":  # a matrix: integers stay integers, float counters stay floats
                dtype = np.int64 if a.dtype.kind in "biu" else np.float64
            else:
                dtype = np.uint8 if kind == "u1" else np.int64
            return a.astype(dtype, copy=False)

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
    """The installed versions, looked up once per process: importlib.metadata parses every
    distribution's METADATA file on each call (a few ms, paid by every save() otherwise)."""
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
