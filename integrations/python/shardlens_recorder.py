"""Record what every rank of a distributed evaluation actually evaluated, for ShardLens.

Add a recorder to your own torch.distributed (or PyTorch Lightning) evaluation; each rank
writes one dump with the dataset index, target and prediction of every sample it
evaluated (plus, optionally, its local confusion matrix and the reported one). Then:

    shardlens-cli import dumps/eval_rank*.npz --dataset fashion-mnist:test --out run.slrun
    shardlens-cli diagnose --run run.slrun

Plain torch.distributed::

    from shardlens_recorder import ShardLensRecorder, IndexedDataset
    loader = DataLoader(IndexedDataset(test_set), batch_size=64,
                        sampler=DistributedSampler(IndexedDataset(test_set), shuffle=False))
    rec = ShardLensRecorder("dumps", num_classes=10, sampler=loader.sampler)
    for index, x, y in loader:
        rec.update(index, y, model(x))          # logits are reduced by argmax
    rec.set_reported(synced_confmat)            # optional: what your metric reported
    rec.save()

Lightning (works without Lightning installed; the callback exists only when it is)::

    trainer = Trainer(callbacks=[ShardLensCallback(ShardLensRecorder("dumps", num_classes=10))])
    # validation_step returns {"index": index, "target": y, "prediction": logits}

Dump format (what `shardlens-cli import` reads): an .npz and/or a .pt (torch.save of a dict
of tensors) with index, target, prediction, flags, rank, world_size [, dataset_size,
batch_size, matrix, reported]. Files are written atomically (temporary file + rename).
Only numpy (for .npz) and torch (for .pt, tensors) are needed, and only when used.
"""

import os
import tempfile

__all__ = ["ShardLensRecorder", "IndexedDataset", "PADDING", "SANITY", "ShardLensCallback"]

PADDING = 1  # a DistributedSampler padding duplicate
SANITY = 2  # evaluated during Lightning's sanity check


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
                 dataset_size=None, batch_size=None, sampler=None, formats=("npz",)):
        """
        out_dir: directory for the dumps ({name}_rank{r}.npz / .pt).
        num_classes: enables the local confusion matrix (saved as `matrix`).
        rank, world_size: default to torch.distributed's, else RANK / WORLD_SIZE, else 0 / 1.
        sampler: a torch DistributedSampler; lets the recorder flag padding duplicates
                 (position k of rank r is padding when r + k * num_replicas >= len(dataset)).
        formats: any of "npz" (needs numpy) and "pt" (torch.save of a dict of tensors).
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
        self.reset()

    # -- identity -------------------------------------------------------------------------
    @property
    def rank(self):
        return self._rank if self._rank is not None else _dist_rank_world()[0]

    @property
    def world_size(self):
        return self._world_size if self._world_size is not None else _dist_rank_world()[1]

    # -- recording ------------------------------------------------------------------------
    def reset(self):
        self.index, self.target, self.prediction, self.flags = [], [], [], []

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
    def _arrays(self):
        """name -> (nested list or ndarray/tensor, kind) of everything the dump holds."""
        out = {
            "index": (self.index, "i8"),
            "target": (self.target, "i8"),
            "prediction": (self.prediction, "i8"),
            "flags": (self.flags, "u1"),
            "rank": (self.rank, "i8"),
            "world_size": (self.world_size, "i8"),
        }
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

    def path(self, fmt):
        return os.path.join(self.out_dir, "%s_rank%d.%s" % (self.name, self.rank, fmt))

    def save(self):
        """Writes this rank's dump(s); returns the paths written."""
        arrays = self._arrays()
        written = []
        if "npz" in self.formats:
            written.append(self._save_npz(arrays))
        if "pt" in self.formats:
            written.append(self._save_pt(arrays))
        return written

    def _save_npz(self, arrays):
        import numpy as np

        def as_numpy(value, kind):
            if hasattr(value, "detach"):
                value = value.detach().cpu().numpy()
            a = np.asarray(value)
            if kind == "m":  # a matrix: integers stay integers, float counters stay floats
                return a.astype(np.int64) if a.dtype.kind in "biu" else a.astype(np.float64)
            return a.astype(np.uint8 if kind == "u1" else np.int64)

        data = {k: as_numpy(v, kind) for k, (v, kind) in arrays.items()}
        path = self.path("npz")

        def write(tmp):
            with open(tmp, "wb") as f:
                np.savez(f, **data)

        _atomic_write(path, write)
        return path

    def _save_pt(self, arrays):
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
        path = self.path("pt")
        _atomic_write(path, lambda tmp: torch.save(data, tmp))
        return path


def _make_callback():
    """A Lightning callback, defined only when Lightning is importable."""
    base = None
    for module in ("lightning.pytorch", "pytorch_lightning"):
        try:
            base = __import__(module, fromlist=["Callback"]).Callback
            break
        except ImportError:
            continue
    if base is None:
        return None

    class ShardLensCallback(base):
        """Records validation/test batches whose step returns a dict with index, target and
        prediction (or preds/logits); saves one dump per rank at the end of each epoch."""

        def __init__(self, recorder, stages=("validate", "test")):
            super().__init__()
            self.recorder = recorder
            self.stages = stages

        def _start(self, trainer):
            self.recorder.reset()
            self.recorder.sanity = bool(getattr(trainer, "sanity_checking", False))

        def _batch(self, outputs):
            if not isinstance(outputs, dict):
                return
            pred = None
            for key in ("prediction", "preds", "logits"):
                if key in outputs:
                    pred = outputs[key]
                    break
            if pred is not None and "index" in outputs and "target" in outputs:
                self.recorder.update(outputs["index"], outputs["target"], pred)

        def on_validation_epoch_start(self, trainer, pl_module):
            self._start(trainer)

        def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                                    dataloader_idx=0):
            self._batch(outputs)

        def on_validation_epoch_end(self, trainer, pl_module):
            if "validate" in self.stages and not getattr(trainer, "sanity_checking", False):
                self.recorder.save()

        def on_test_epoch_start(self, trainer, pl_module):
            self._start(trainer)

        def on_test_batch_end(self, trainer, pl_module, outputs, batch, batch_idx,
                              dataloader_idx=0):
            self._batch(outputs)

        def on_test_epoch_end(self, trainer, pl_module):
            if "test" in self.stages:
                self.recorder.save()

    return ShardLensCallback


ShardLensCallback = _make_callback()
