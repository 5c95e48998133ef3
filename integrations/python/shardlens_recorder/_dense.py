"""Per-sample cells: what a segmentation image, a token sequence or a multilabel item adds to
a confusion matrix, kept as its non-zero (true, predicted, count) cells (the dump's
cells_per_record, cell_target, cell_prediction, cell_count, sample_size, ignored; the model of
core/vocabulary/sample_cells.h).

A batch's cells are ONE histogram on the tensors' device: each element's key is
sample * S + (target - lo) * C + prediction, counted by one bincount (on CUDA a scatter_add,
since CUDA's bincount reads the keys' range back to the host). Nothing is read back per batch:
on CUDA the [N, S] histogram is copied to pinned host memory without blocking and compacted
to its non-zero cells when its copy has landed (checked at the next batch, without waiting,
and at the end); on the CPU it is compacted at once (a few hundred microseconds against the
tens of milliseconds of the bincount). What is kept is the non-zero cells, never H x W.

Multilabel items (torchmetrics' Multilabel* conventions: [N, L, ...] targets of 0/1, float
predictions sigmoid-ed when any lies outside [0, 1] then > threshold, ignore_index elements
dropped) use the same histogram with S = 4 L bins a sample: bin 4 l + 2 t + p is cell
(2 l + t, 2 l + p) of the matrix of 2 L classes.
"""
from ._tensors import ShardLensInputError

# Bins a batch's histogram may have before the ignore index is folded into one extra row by
# torch.where (an ignore index far outside the classes would make a sparse, huge histogram).
MAX_BINS = 1 << 24


def _torch():
    import torch
    return torch


class _Layout:
    """Where a target value lands in one sample's S bins: row (t - lo), column prediction."""

    def __init__(self, classes, ignore_index, samples):
        self.classes = classes
        self.ignore_index = ignore_index
        lo, hi = 0, classes - 1
        if ignore_index is not None:
            lo, hi = min(lo, ignore_index), max(hi, ignore_index)
        self.folded = (hi - lo + 1) * classes * samples > MAX_BINS
        if self.folded:  # the ignore index becomes row C (torch.where: one more pass)
            lo, hi = 0, classes
        self.lo, self.rows = lo, hi - lo + 1
        self.size = self.rows * classes  # S

    def ignore_row(self):
        if self.ignore_index is None:
            return None
        return self.classes if self.folded else self.ignore_index - self.lo


class DenseCells:
    """The cells of one rank's evaluation, sample after sample, in the order added.

    num_classes: C (multilabel: the number of labels L; the matrix then has 2 L classes).
    ignore_index: target value whose elements are not counted (their number is `ignored`).
    task: "segmentation", "tokens" or "multilabel" (what the dump's settings say).
    threshold: multilabel float predictions above it are "present".
    """

    def __init__(self, num_classes, ignore_index=None, task="segmentation", threshold=0.5):
        if task not in ("segmentation", "tokens", "multilabel"):
            raise ValueError("unknown task %r" % (task,))
        if num_classes is None or int(num_classes) < 1:
            raise ValueError("num_classes must be a positive integer, got %r" % (num_classes,))
        self.task = task
        self.num_labels = int(num_classes) if task == "multilabel" else None
        self.classes = 2 * self.num_labels if self.num_labels else int(num_classes)
        self.ignore_index = None if ignore_index is None else int(ignore_index)
        self.threshold = threshold
        self.batches = 0
        self.count = 0  # samples added
        self._parts = []  # compacted batches: dicts of host arrays
        self._pending = []  # CUDA: (event, pinned host histogram, how to compact it)
        self._checks = []  # CUDA: (batch, elements a sample, _summary of target, of ids or None)
        self._host = None
        self._scratch = None  # the CPU path's key buffer, reused batch after batch
        # Tests: the device path's histogram and deferred checks on CPU tensors.
        self._device_path_on_cpu = False
        self._refusals = []  # a device's (batch, error), raised at the end

    def _on_device(self, tensor):
        return tensor.device.type != "cpu" or self._device_path_on_cpu

    # -- adding ----------------------------------------------------------------------------
    def add(self, target, preds, class_dim=1, sample_sizes=None):
        """A batch of segmentation images or token sequences: target [N, ...] class ids
        (ignore_index allowed), preds [N, ...] class ids or [N, C, ...] scores/logits (argmax
        over class_dim, as torchmetrics' multiclass metrics; class_dim=-1 for a Hugging Face
        model's [N, T, C] logits). sample_sizes: each sample's element count, when not all of
        target's elements of a sample are its own (default: prod(target.shape[1:])), on the
        host (a list or array: a device tensor would be read back each batch). Returns
        the class ids used (on the device), for a caller that passes them on."""
        if self.task == "multilabel":
            raise ValueError("a multilabel recorder takes add_multilabel()")
        torch = _torch()
        t, p = _check_tensors(target, preds, "add")
        if t.is_floating_point():
            raise ShardLensInputError(
                "the target of batch %d is a float %s tensor: torchmetrics' multiclass metrics "
                "take integer class ids; pass them as integers" % (self.batches, t.dtype))
        scores = p.ndim == t.ndim + 1
        if scores:
            if p.shape[class_dim] != self.classes:
                raise ShardLensInputError(
                    "the predictions of batch %d have %d scores a position (shape %s), the "
                    "metric %d classes" % (self.batches, p.shape[class_dim], list(p.shape),
                                           self.classes))
            p = argmax(p, class_dim)
        if tuple(p.shape) != tuple(t.shape):
            raise ShardLensInputError(
                "batch %d: target of shape %s, predictions of shape %s: expected [N, ...] "
                "targets and [N, ...] class ids or [N, C, ...] scores"
                % (self.batches, list(t.shape), list(preds.shape)))
        if p.is_floating_point():
            raise ShardLensInputError(
                "batch %d: float predictions of the target's shape %s: expected class ids or "
                "[N, C, ...] scores" % (self.batches, list(t.shape)))
        n = t.shape[0]
        t2, p2 = t.reshape(n, -1), p.reshape(n, -1)
        layout = _Layout(self.classes, self.ignore_index, n)
        batch = self.batches
        self._check_range(batch, t2, None if scores else p2, layout)
        if not self._on_device(t2) and not layout.folded:
            hist = self._cpu_histogram(t2, p2, layout)
        else:
            t2 = t2 if t2.dtype == torch.int64 else t2.long()
            p2 = p2 if p2.dtype == torch.int64 else p2.long()
            if layout.folded:
                t2 = torch.where(t2 == self.ignore_index, torch.full_like(t2, self.classes), t2)
            # key = sample * S + (t - lo) * C + p: one add of the two tensors, one of offsets
            key = torch.add(p2, t2, alpha=self.classes)
            key += (torch.arange(n, device=key.device) * layout.size -
                    layout.lo * self.classes).unsqueeze(1)
            hist = self._histogram(key, n * layout.size)
        self._keep(hist, ("multiclass", batch, n, layout, _sizes(sample_sizes, n, t2.shape[1])))
        return p

    def _cpu_histogram(self, t2, p2, layout):
        """[N * S] on the CPU, a sample at a time through numpy into one reused key buffer:
        a sample's keys stay in cache between their two passes and the bincount, and no
        batch-sized temporary is allocated (a fresh 32 MB buffer a batch costs its page
        faults again: in bench/recorder_dense_bench.py torch's add + bincount took 2 to 3
        times as long)."""
        import numpy as np
        n, per = t2.shape
        t_np, p_np = t2.numpy(), p2.numpy()
        if self._scratch is None or self._scratch.shape[0] < per:
            self._scratch = np.empty(per, np.int64)
        key = self._scratch[:per]
        hist = np.empty((n, layout.size), np.int64)
        shift = -layout.lo * self.classes
        for s in range(n):
            np.multiply(t_np[s], self.classes, out=key, dtype=np.int64, casting="unsafe")
            np.add(key, p_np[s], out=key, casting="unsafe")
            if shift:
                key += shift
            hist[s] = np.bincount(key, minlength=layout.size)
        return _torch().from_numpy(hist.reshape(-1))

    def add_multilabel(self, target, preds):
        """A batch of multilabel items: target [N, L, ...] of 0/1 (ignore_index allowed),
        preds [N, L, ...] probabilities or logits (sigmoid when any value of the batch lies
        outside [0, 1], then > threshold, as torchmetrics) or 0/1 ids."""
        if self.task != "multilabel":
            raise ValueError("add_multilabel() needs a recorder of task 'multilabel'")
        torch = _torch()
        t, p = _check_tensors(target, preds, "add_multilabel")
        labels = self.num_labels
        if tuple(p.shape) != tuple(t.shape) or t.ndim < 2 or t.shape[1] != labels:
            raise ShardLensInputError(
                "batch %d: multilabel target of shape %s, predictions of shape %s: expected "
                "both [N, %d, ...]" % (self.batches, list(t.shape), list(p.shape), labels))
        if t.is_floating_point():
            raise ShardLensInputError(
                "the multilabel target of batch %d is a float %s tensor: pass 0/1 integers"
                % (self.batches, t.dtype))
        if p.is_floating_point():
            inside = ((p >= 0) & (p <= 1)).all()  # on the device: no wait
            p = torch.where(inside, p, p.sigmoid()) > self.threshold
        n = t.shape[0]
        t3 = t.reshape(n, labels, -1).long()
        p3 = p.reshape(n, labels, -1).long()
        size = 4 * labels + 1  # the last bin of a sample: its ignored elements
        key = torch.add(p3, t3, alpha=2)
        key += (torch.arange(n, device=key.device) * size).view(n, 1, 1) + \
            4 * torch.arange(labels, device=key.device).view(1, labels, 1)
        ok = (t3 == 0) | (t3 == 1)
        if self.ignore_index is not None:
            ignored = t3 == self.ignore_index
            key = torch.where(ignored, (torch.arange(n, device=key.device) * size + size - 1)
                              .view(n, 1, 1), key)
            ok |= ignored
        self._check_values(self.batches, ~ok, t3, ((p3 < 0) | (p3 > 1)), p3)
        hist = self._histogram(key.reshape(-1), n * size)
        self._keep(hist, ("multilabel", self.batches, n, labels, t3.shape[1] * t3.shape[2]))
        return p

    def _histogram(self, key, bins):
        torch = _torch()
        key = key.reshape(-1)
        if not self._on_device(key):
            return torch.bincount(key, minlength=bins)[:bins]
        key = key.clamp(0, bins - 1)  # a bad value is refused at the end, never a device fault
        hist = torch.zeros(bins, dtype=torch.int64, device=key.device)
        return hist.scatter_add_(0, key, torch.ones_like(key))

    def _check_range(self, batch, t2, p2, layout):
        """Targets outside the classes and the ignore index, class ids outside [0, C): refused
        (on the CPU at once, on a device at the end: no wait per batch). One min/max pass a
        tensor: a target between the classes and the ignore index lands in a row of the
        histogram that _compact refuses."""
        torch = _torch()
        c, ig = self.classes, self.ignore_index
        if self._on_device(t2):
            # A device: the first bad element of each tensor found there and read at the end
            # (the masks cost a few passes of the GPU; holding the batch would hold H x W).
            bad_t, bad_p = self._bad_masks(t2, p2)
            self._checks.append((batch, t2.shape[1], _summary(bad_t, t2), _summary(bad_p, p2)))
            return
        if layout.folded:  # rare: an ignore index far from the classes; masks, once
            bad_t = ((t2 < 0) | (t2 >= c)) & (t2 != ig)
            flags = [bad_t.any()]
        else:
            low, high = (v.long() for v in torch.aminmax(t2))  # uint8 would wrap 256 to 0
            flags = [(low < layout.lo) | (high >= layout.lo + layout.rows)]
        if p2 is not None:
            low, high = (v.long() for v in torch.aminmax(p2))
            flags.append((low < 0) | (high >= c))
        if any(bool(f) for f in flags):  # on the CPU: no device to wait for
            raise self._range_refusal(batch, t2, p2)

    def _bad_masks(self, t2, p2):
        c, ig = self.classes, self.ignore_index
        bad_t = (t2 < 0) | (t2 >= c)
        if ig is not None:
            bad_t &= t2 != ig
        return bad_t, None if p2 is None else (p2 < 0) | (p2 >= c)

    def _range_refusal(self, batch, t2, p2):
        bad_t, bad_p = self._bad_masks(t2, p2)
        return _refusal(batch, bad_t, t2, bad_p, p2, self.classes, self.ignore_index, self.task)

    def _check_values(self, batch, bad_t, t, bad_p, p):
        if not self._on_device(t):
            if bool(bad_t.any()) or bool(bad_p.any()):
                raise _refusal(batch, bad_t, t, bad_p, p, self.classes, self.ignore_index,
                               self.task)
            return
        self._checks.append((batch, t[0].numel(), _summary(bad_t, t), _summary(bad_p, p)))

    def _keep(self, hist, how):
        on_device = self._on_device(hist)
        if not on_device:  # compacted first: a refused batch is not counted
            self._parts.append(_compact(hist.numpy(), how, self.classes, self.ignore_index))
        self.batches += 1
        self.count += how[2]
        self._host = None
        if not on_device:
            return
        if hist.device.type == "cpu":  # the device path on CPU tensors (tests): landed
            self._pending.append((None, hist, how))
        else:
            # The histogram to pinned host memory without waiting; compacted once its copy
            # has landed (an event's query() never waits).
            torch = _torch()
            host = torch.empty(hist.shape, dtype=hist.dtype, pin_memory=True)
            host.copy_(hist, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
            self._pending.append((event, host, how))
        self._land(wait=False)

    def _land(self, wait):
        """Compacts the copied histograms whose copy has landed (all of them with wait); a
        device's refusals are kept and the first batch's raised with wait (at the end)."""
        while self._pending and (wait or self._pending[0][0] is None or
                                 self._pending[0][0].query()):
            event, host, how = self._pending.pop(0)
            if event is not None:
                event.synchronize()
            try:
                self._parts.append(_compact(host.numpy(), how, self.classes,
                                            self.ignore_index))
            except ShardLensInputError as e:
                self._refusals.append((how[1], e))
        if wait and self._checks:  # a device's checks, read in one transfer
            torch = _torch()
            found = torch.stack([torch.cat([st, sp if sp is not None else torch.zeros_like(st)])
                                 for _, _, st, sp in self._checks]).cpu().tolist()
            for (batch, per_sample, _, _), row in zip(self._checks, found):
                for what, (bad, first, value) in (("target", row[:3]), ("prediction", row[3:])):
                    if bad:
                        self._refusals.append((batch, _refusal_at(
                            batch, what, first // per_sample, value, self.classes,
                            self.ignore_index, self.task)))
                        break
            self._checks = []
        if wait and self._refusals:
            raise min(self._refusals, key=lambda r: r[0])[1]

    # -- reading ---------------------------------------------------------------------------
    def arrays(self):
        """The dump's arrays of every sample added, in order (numpy int64): cells_per_record,
        cell_target, cell_prediction, cell_count, sample_size, ignored, and target /
        prediction: each sample's largest true and predicted class by count (the lower class
        on a tie, 0 for a sample without cells)."""
        import numpy as np
        if self._host is not None:
            return self._host
        self._land(wait=True)
        names = ("cells_per_record", "cell_target", "cell_prediction", "cell_count",
                 "sample_size", "ignored")
        out = {k: np.concatenate([part[k] for part in self._parts]).astype(np.int64, copy=False)
               if self._parts else np.zeros(0, np.int64) for k in names}
        out["target"], out["prediction"] = dominant(
            out["cells_per_record"], out["cell_target"], out["cell_prediction"],
            out["cell_count"], self.classes)
        self._host = out
        return out

    def matrix(self):
        """[C, C] of every cell added (row = target, column = prediction): the rank's matrix."""
        import numpy as np
        a = self.arrays()
        c = self.classes
        return np.bincount(a["cell_target"] * c + a["cell_prediction"],
                           weights=a["cell_count"], minlength=c * c).astype(np.int64).reshape(c, c)

    def settings(self):
        """The dump settings these cells need: task, ignore_index, num_labels, num_classes."""
        return {"task": self.task, "ignore_index": self.ignore_index,
                "num_labels": self.num_labels, "num_classes": self.classes}


def _check_tensors(target, preds, what):
    if not (hasattr(target, "detach") and hasattr(preds, "detach")):
        raise ShardLensInputError("%s() takes torch tensors (target, preds), got %s and %s"
                                  % (what, type(target).__name__, type(preds).__name__))
    t, p = target.detach(), preds.detach()
    if t.ndim == 0:
        raise ShardLensInputError("%s(): a target of shape [] has no samples" % what)
    if t.device != p.device:
        raise ShardLensInputError("%s(): target on %s, predictions on %s" % (what, t.device,
                                                                             p.device))
    return t, p


def argmax(scores, class_dim):
    """torch.argmax over the class dimension; [N, C, ...] float32/64 on the CPU through
    numpy's argmax (the same first maximum, several times faster on the CPU)."""
    torch = _torch()
    if scores.device.type == "cpu" and scores.dtype in (torch.float32, torch.float64) and \
            class_dim in (1, -1) and scores.ndim >= 2:
        try:
            return torch.from_numpy(scores.numpy().argmax(axis=class_dim))
        except (RuntimeError, TypeError):
            pass
    return scores.argmax(dim=class_dim)


def _sizes(sample_sizes, n, per_sample):
    import numpy as np
    if sample_sizes is None:
        return np.full(n, per_sample, np.int64)
    if hasattr(sample_sizes, "detach"):
        sample_sizes = sample_sizes.detach().cpu().numpy()
    sizes = np.asarray(sample_sizes, dtype=np.int64).reshape(-1)
    if len(sizes) != n:
        raise ShardLensInputError("sample_sizes holds %d sizes for %d samples" % (len(sizes), n))
    return sizes


def _compact(hist, how, classes, ignore_index):
    """A batch's host histogram -> its samples' non-zero cells and counts."""
    import numpy as np
    kind, batch, n = how[0], how[1], how[2]
    if kind == "multilabel":
        labels, per_sample = how[3], how[4]
        h = hist.reshape(n, 4 * labels + 1)
        ignored = h[:, -1].copy()
        cells = h[:, :-1]
        s, k = np.nonzero(cells)
        label, t, p = k // 4, (k // 2) % 2, k % 2
        return {"cells_per_record": np.bincount(s, minlength=n), "cell_target": 2 * label + t,
                "cell_prediction": 2 * label + p, "cell_count": cells[s, k],
                "sample_size": np.full(n, per_sample, np.int64), "ignored": ignored}
    layout, sizes = how[3], how[4]
    h = hist.reshape(n, layout.rows, classes)
    row = layout.ignore_row()
    _refuse_other_rows(h, layout, row, batch, classes, ignore_index)
    ignored = h[:, row, :].sum(axis=1) if row is not None else np.zeros(n, np.int64)
    first = -layout.lo  # the row of class 0
    cells = h[:, first:first + classes, :]
    if row is not None and first <= row < first + classes:  # an ignore index among the classes
        cells = cells.copy()
        cells[:, row - first, :] = 0
    s, t, p = np.nonzero(cells)
    return {"cells_per_record": np.bincount(s, minlength=n), "cell_target": t,
            "cell_prediction": p, "cell_count": cells[s, t, p], "sample_size": sizes,
            "ignored": ignored}


def dominant(cells_per_record, cell_target, cell_prediction, cell_count, classes):
    """Each record's largest true and largest predicted class by count (the lower class on a
    tie; 0 for a record without cells), as CellTable::dominant does."""
    import numpy as np
    records = len(cells_per_record)
    owner = np.repeat(np.arange(records), cells_per_record)
    out = []
    for cls in (cell_target, cell_prediction):
        # in chunks of records, so that R x C stays small at many classes
        best = np.zeros(records, np.int64)
        step = max(1, (1 << 22) // max(classes, 1))
        for start in range(0, records, step):
            end = min(records, start + step)
            lo, hi = np.searchsorted(owner, [start, end])
            totals = np.zeros((end - start, classes), np.int64)
            np.add.at(totals, (owner[lo:hi] - start, cls[lo:hi]), cell_count[lo:hi])
            best[start:end] = totals.argmax(axis=1)
        out.append(best)
    return out[0], out[1]


def _first_bad(bad, values):
    """(sample within the batch, value) of the first element flagged bad."""
    import numpy as np
    b = bad.detach().cpu().numpy().reshape(bad.shape[0], -1)
    v = values.detach().cpu().numpy().reshape(values.shape[0], -1)
    s, e = np.argwhere(b)[0]
    return int(s), v[s, e].item()


def _refusal(batch, bad_t, t, bad_p, p, classes, ignore_index, task):
    if bool(bad_t.any()):
        sample, value = _first_bad(bad_t, t)
        return _refusal_at(batch, "target", sample, value, classes, ignore_index, task)
    sample, value = _first_bad(bad_p, p)
    return _refusal_at(batch, "prediction", sample, value, classes, ignore_index, task)

def _refuse_other_rows(h, layout, ignore_row, batch, classes, ignore_index):
    """Rows of the histogram that are neither a class nor the ignore index (targets between
    the classes and a distant ignore index): refused, naming the sample and the value."""
    import numpy as np
    first = -layout.lo
    other = np.ones(layout.rows, bool)
    other[first:first + classes] = False
    if ignore_row is not None:
        other[ignore_row] = False
    if not other.any():
        return
    counts = h[:, other, :].sum(axis=2)
    if not counts.any():
        return
    sample, k = np.argwhere(counts)[0]
    value = int(np.flatnonzero(other)[k]) + layout.lo
    raise _refusal_at(batch, "target", int(sample), value, classes, ignore_index,
                      "segmentation")


def _summary(bad, values):
    """[any bad, flat index of the first, its value] as one device tensor (no wait)."""
    if bad is None:
        return None
    torch = _torch()
    flat = bad.reshape(-1)
    first = flat.to(torch.uint8).argmax()
    # index_select, not values[first]: indexing by a 0-dim tensor may read it on the host
    value = values.reshape(-1).index_select(0, first.reshape(1))[0]
    return torch.stack([flat.any().long(), first, value.long()])


def _refusal_at(batch, what, sample, value, classes, ignore_index, task):
    where = "sample %d of batch %d" % (sample, batch)
    if what == "target":
        allowed = "0 or 1" if task == "multilabel" else "a class id in [0, %d)" % classes
        return ShardLensInputError(
            "%s has the target value %s, which is not %s%s: torchmetrics would refuse it or "
            "count it in another cell, so it is not recorded"
            % (where, value, allowed,
               "" if ignore_index is None else " nor the ignore_index %d" % ignore_index))
    return ShardLensInputError("%s has the predicted class %s, outside [0, %d)"
                               % (where, value, 2 if task == "multilabel" else classes))


def multilabel_square(confmat):
    """torchmetrics' MultilabelConfusionMatrix [L, 2, 2] as the [2 L, 2 L] matrix of the 2 L
    classes: label l's [t, p] at (2 l + t, 2 l + p), zeros off its block."""
    import numpy as np
    if hasattr(confmat, "detach"):
        confmat = confmat.detach().cpu().numpy()
    a = np.asarray(confmat)
    labels = a.shape[0]
    out = np.zeros((2 * labels, 2 * labels), a.dtype)
    for block in range(labels):
        out[2 * block:2 * block + 2, 2 * block:2 * block + 2] = a[block]
    return out
