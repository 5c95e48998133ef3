"""The recorder: one rank's records of one evaluation, kept on their device until one
transfer at save(), and written as the dump dump_format.json describes (_writer)."""
import os
import warnings

from . import _dense, _format, _samplers, _sync, _tensors, _writer
from ._blocks import Blocks

PADDING = _format.FLAG_BITS["PADDING"]  # a sampler's padding duplicate
SANITY = _format.FLAG_BITS["SANITY"]  # evaluated during Lightning's sanity check


class ShardLensWarning(UserWarning):
    """What the recorder could not record, and why (said once, on rank 0)."""


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
                 epoch=None, threshold=0.5, loader=None, sync=None, ignore_index=None,
                 num_labels=None):
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
        loader: the evaluation's DataLoader: its batch size, drop_last and (when sampler is
                not given) sampler are recorded. Without loader or batch_size, the batch size
                recorded is the length of the first batch after reset(), said as such.
        sync: how the reported matrix (set_reported) was synchronized, as `shardlens-cli
              simulate --sync` names it ("all-reduce" for dist.all_reduce of the matrix,
              "gather-for-metrics", ...), so that `simulate --like` reproduces it; None:
              unknown (the simulation then assumes all-reduce and says so).
        ignore_index: for add_dense / add_multilabel: the target value whose pixels, tokens
                      or labels are not counted (torchmetrics' ignore_index).
        num_labels: for add_multilabel: the label count L (the matrix then has 2 L classes,
                    class 2 l + t = "label l is t"); num_classes is then 2 L.
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
        self.loader = loader
        if sampler is None and loader is not None:
            sampler = getattr(getattr(loader, "batch_sampler", None), "sampler", None) or \
                getattr(loader, "sampler", None)
        self.sampler = sampler
        self.sync = _sync.check_sync(sync)
        self._first_batch = None  # the first batch's length since reset()
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
        self.ignore_index = ignore_index
        self.num_labels = num_labels
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
        self._batches = 0  # update() calls since reset(): the batch a refusal names
        self._first_batch = None
        # Float targets of batches after the first: (batch, any value not a class id, the
        # first such value) on their device, read once in save() (no wait per batch).
        self._target_checks = []
        # A segmentation, token or multilabel evaluation: each record's cells (_dense.py);
        # None for classification (one cell a record: its target and prediction).
        self._cells = None
        if epoch is not None:
            self.epoch = _check_epoch(epoch)

    @property
    def count(self):
        """Samples recorded since reset()."""
        return self._count

    def update(self, index, target, prediction, flags=None):
        """Adds one batch. prediction: class ids [N] or scores/logits [N, C]. Tensors are
        reduced to class ids on their device and stay there until save().
        A float index is refused (ShardLensInputError) on its dtype, as torch refuses it as an
        index; a float target holding a value that is not a class id (0.7, NaN) is refused at
        the first batch, and found in save() for a later one (its test stays on the device)."""
        batch = self._batches
        _tensors.check_index(index, batch)
        self._check_target(target, batch)
        pred = _tensors.class_ids_lazy(prediction, self.threshold)
        index, target = _tensors.flat(index), _tensors.flat(target)
        n = _tensors.length(target)
        if not (_tensors.length(index) == n == _tensors.length(pred)):
            raise ValueError("index, target and prediction lengths differ: %d, %d, %d"
                             % (_tensors.length(index), n, _tensors.length(pred)))
        if flags is not None:
            flags = _tensors.flat(flags)
            if _tensors.length(flags) != n:
                raise ValueError("flags length %d != batch length %d"
                                 % (_tensors.length(flags), n))
        if self._cells is not None:
            raise ValueError("update() and add_dense()/add_multilabel() in one evaluation")
        if self._batches == 0:
            self._first_batch = n
        self._batches += 1
        self._append((index, target, pred) + (() if flags is None else (flags,)), flags, n)

    def _append(self, values, flags, n):
        pred = values[2]
        if _tensors.is_tensor(pred) and all(_tensors.is_tensor(v) and v.device == pred.device
                                            for v in values):
            where = ("blocks", self._blocks.append(values))
        else:
            where = ("values", tuple(values[:3]) + (flags,))
        self._chunks.append((where, flags is not None, self.sanity, self._count, n))
        self._count += n
        self._columns_cache = None

    def add_dense(self, index, target, preds, flags=None, task="segmentation", class_dim=1,
                  sample_sizes=None):
        """Adds one batch of segmentation images or token sequences, one record a sample:
        target [N, ...] class ids (ignore_index allowed), preds [N, ...] class ids or
        [N, C, ...] scores/logits (argmax over class_dim, as torchmetrics' multiclass
        metrics; class_dim=-1 for [N, T, C] logits). Each sample's (true, predicted) counts
        are one histogram on the tensors' device (_dense.py), kept as its non-zero cells; no
        host sync per batch on a GPU. task: "segmentation" or "tokens". Returns the class ids
        (on the device). num_classes must be set."""
        n = self._dense_batch(index, target, flags, task)
        ids = self._cells.add(target, preds, class_dim, sample_sizes)
        self._add_records(index, flags, n)
        return ids

    def add_multilabel(self, index, target, preds, flags=None):
        """Adds one batch of multilabel items, one record an item: target [N, L, ...] of 0/1
        (ignore_index allowed), preds [N, L, ...] probabilities or logits (sigmoid when any
        value of the batch lies outside [0, 1], then > threshold, as torchmetrics'
        Multilabel* metrics) or 0/1. num_labels (or num_classes = L) must be set; the dump's
        matrix has 2 L classes."""
        if self.num_labels is None:
            if self.num_classes is None:
                raise ValueError("add_multilabel needs num_labels")
            self.num_labels = int(self.num_classes)
        self.num_classes = 2 * int(self.num_labels)
        n = self._dense_batch(index, target, flags, "multilabel")
        self._cells.add_multilabel(target, preds)
        self._add_records(index, flags, n)

    def _dense_batch(self, index, target, flags, task):
        """Checks a batch of samples of many cells; returns its length."""
        batch = self._batches
        _tensors.check_index(index, batch)
        if self._cells is None:
            if self._count:
                raise ValueError("update() and add_dense()/add_multilabel() in one evaluation")
            classes = self.num_labels if task == "multilabel" else self.num_classes
            if classes is None:
                raise ValueError("add_dense needs num_classes")
            self._cells = _dense.DenseCells(classes, self.ignore_index, task, self.threshold)
        elif self._cells.task != task:
            raise ValueError("a %s batch in a %s evaluation" % (task, self._cells.task))
        n = target.shape[0] if hasattr(target, "shape") and len(target.shape) else 0
        if _tensors.length(index) != n:
            raise ValueError("index length %d != batch length %d" % (_tensors.length(index), n))
        if flags is not None and _tensors.length(flags) != n:
            raise ValueError("flags length %d != batch length %d" % (_tensors.length(flags), n))
        return n

    def _add_records(self, index, flags, n):
        """The batch's records: index and flags; target and prediction are each sample's
        dominant classes, filled from the cells in _columns()."""
        index = _tensors.flat(index)
        if _tensors.is_tensor(index):
            import torch
            zeros = torch.zeros(n, dtype=torch.int64, device=index.device)
        else:
            zeros = [0] * n
        if flags is not None:
            flags = _tensors.flat(flags)
        if self._batches == 0:
            self._first_batch = n
        self._batches += 1
        self._append((index, zeros, zeros) + (() if flags is None else (flags,)), flags, n)

    def _check_target(self, target, batch):
        bad = _tensors.nonintegral(target)  # None for an integer dtype: nothing computed
        if bad is None:
            return
        if not _tensors.is_tensor(bad) or batch == 0:
            if _tensors.any_true(bad):  # the first batch's one read, or a host array
                raise _tensors.refuse_target(target, bad, batch)
            return
        import torch
        first = target.reshape(-1)[bad.reshape(-1).to(torch.int32).argmax()]  # no wait
        self._target_checks.append((batch, bad.any(), first))

    def _refuse_later_targets(self):
        """The float targets of later batches, read in one transfer: the first batch that
        held a value not a class id is refused."""
        if not self._target_checks:
            return
        import torch
        found = torch.stack([b for _, b, _ in self._target_checks]).cpu().tolist()
        for (batch, _, first), bad in zip(self._target_checks, found):
            if bad:
                raise _tensors.refuse_target(first.reshape(1), None, batch)

    def _columns(self):
        """index, target, prediction, flags of every record as numpy arrays: every tensor
        of the epoch concatenated on its device and copied to the host in one transfer."""
        import numpy as np
        if self._columns_cache is not None:
            return self._columns_cache
        self._refuse_later_targets()
        chunks = self._chunks
        blocks = self._blocks.to_host()  # one transfer per device
        host = {}  # (column, chunk) -> ndarray of what was a tensor of "values"
        pieces, keys = [], []
        for i, ((kind, where), *_rest) in enumerate(chunks):
            for col, v in enumerate(where if kind == "values" else ()):
                if _tensors.is_tensor(v):
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
        if self._cells is not None:  # each sample's dominant classes, from its cells
            cells = self._cells.arrays()
            target, prediction = cells["target"], cells["prediction"]
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
        if self._cells is not None:
            return self._cells.matrix()
        c = self.num_classes
        cols = self._columns()
        t, p = cols["target"], cols["prediction"]
        inside = (t >= 0) & (t < c) & (p >= 0) & (p < c)
        return np.bincount(t[inside] * c + p[inside], minlength=c * c).reshape(c, c)

    # -- saving ---------------------------------------------------------------------------
    def _arrays(self, epoch):
        """name -> value of everything the dump holds (names and dtypes: dump_format.json)."""
        cols = self._columns()
        out = {"format_version": _format.FORMAT_VERSION,
               "index": cols["index"], "target": cols["target"],
               "prediction": cols["prediction"], "flags": cols["flags"],
               "rank": self.rank, "world_size": self.world_size, "epoch": epoch,
               "dataloader_idx": self.dataloader_idx, "validation_in_epoch": self.validation}
        if self.sanity:
            out["sanity"] = 1
        dataset_size = self.dataset_size
        if dataset_size is None:
            dataset_size = _samplers.dataset_size(self.sampler)
        if dataset_size is not None:
            out["dataset_size"] = dataset_size
        # A front end's settings (Lightning, Accelerate) say the batch size themselves.
        batch_size = self.batch_size if self.settings is not None else self._batch_size()[0]
        if batch_size is not None:
            out["batch_size"] = batch_size
        # Only a matrix the rank accumulated itself (set_matrix): one computed here from the
        # records would say nothing the records do not, and at 1000 classes its 8 MB were
        # most of what save() cost and 50 times the records of an ImageNet rank's shard.
        # Each dense, or as its nonzero cells where that is smaller (_writer.matrix_arrays).
        if self.matrix is not None:
            out.update(_writer.matrix_arrays("matrix", self._square(self.matrix)))
        if self.reported is not None:
            out.update(_writer.matrix_arrays("reported", self._square(self.reported)))
        settings = self.settings if self.settings is not None else self._plain_settings(
            epoch, dataset_size)
        if self._cells is not None:
            cells = self._cells.arrays()
            for name in ("cells_per_record", "cell_target", "cell_prediction", "cell_count",
                         "sample_size", "ignored"):
                out[name] = cells[name]
            settings = _format.update_settings(dict(settings), **self._cells.settings())
        out["settings_json"] = _writer.settings_bytes(settings)
        return out

    def _square(self, matrix):
        """A multilabel [L, 2, 2] matrix (torchmetrics' MultilabelConfusionMatrix) as the
        [2 L, 2 L] matrix of the 2 L classes (label l's block on the diagonal); others as
        given."""
        shape = tuple(getattr(matrix, "shape", ()))
        if self._cells is None or self._cells.task != "multilabel" or len(shape) != 3:
            return matrix
        return _dense.multilabel_square(matrix)

    def _batch_size(self):
        """(batch size, how it was known: settings_json's batch_size_source): the one given,
        the loader's, else the first batch's length; (None, None) when none is known."""
        if self.batch_size is not None:
            return self.batch_size, "given"
        loader = self.loader
        size = getattr(loader, "batch_size", None) or \
            getattr(getattr(loader, "batch_sampler", None), "batch_size", None)
        if size is not None:
            return int(size), "loader"
        if self._first_batch:
            return int(self._first_batch), "first-batch"
        return None, None

    def _plain_settings(self, epoch, dataset_size):
        """settings_json of a dump written outside Lightning: what the sampler and the loader
        tell, the batch size and how it was known, and the sync the user named."""
        batch_size, source = self._batch_size()
        loader = self.loader
        drop_last = getattr(loader, "drop_last", None) if loader is not None else None
        return _format.new_settings(
            "torch", **_samplers.sampler_settings(self.sampler), batch_size=batch_size,
            batch_size_source=source, sync=self.sync,
            loader_drop_last=None if drop_last is None else bool(drop_last),
            sanity=bool(self.sanity), stage=self.stage or "validate",
            dataloader_idx=self.dataloader_idx, validation_in_epoch=self.validation,
            world_size=self.world_size, rank=self.rank, dataset_size=dataset_size,
            num_classes=self.num_classes, epoch=epoch, versions=_format.versions())

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
        return [_writer.WRITERS[fmt](arrays, self.path(fmt, epoch))
                for fmt in ("npz", "pt") if fmt in self.formats]
