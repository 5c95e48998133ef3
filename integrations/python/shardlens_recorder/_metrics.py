"""torchmetrics: what the metrics of an unchanged LightningModule see, read by wrapping
each instance's update() for one evaluation."""
import warnings

from . import _tensors


# -- torchmetrics: what an unchanged LightningModule's metrics see ----------------------------
# Class name -> how its update() turns preds into class ids (torchmetrics 1.x: multiclass
# metrics take argmax over dim 1 when preds has one more dimension than target; binary ones
# apply sigmoid when any score lies outside [0, 1], then > threshold).
KNOWN_METRICS = {
    "MulticlassConfusionMatrix": "multiclass", "MulticlassAccuracy": "multiclass",
    "MulticlassF1Score": "multiclass", "MulticlassFBetaScore": "multiclass",
    "MulticlassPrecision": "multiclass", "MulticlassRecall": "multiclass",
    "MulticlassStatScores": "multiclass",
    "BinaryConfusionMatrix": "binary", "BinaryAccuracy": "binary", "BinaryF1Score": "binary",
    "BinaryFBetaScore": "binary", "BinaryPrecision": "binary", "BinaryRecall": "binary",
    "BinaryStatScores": "binary",
}
# Metrics whose compute() is the confusion matrix itself: the reported matrix.
MATRIX_METRICS = ("MulticlassConfusionMatrix", "BinaryConfusionMatrix")


def _is_torchmetric(module):
    return any(k.__name__ == "Metric" and k.__module__.startswith("torchmetrics")
               for k in type(module).__mro__)


def _metric_kind(metric):
    """(known class name, "multiclass" | "binary"), or (None, None) for a metric not read."""
    for k in type(metric).__mro__:
        if k.__name__ in KNOWN_METRICS and k.__module__.startswith("torchmetrics"):
            return k.__name__, KNOWN_METRICS[k.__name__]
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


class MetricWatch:
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
        if not (_tensors.is_tensor(preds) and _tensors.is_tensor(target)):
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
                preds = _tensors.argmax_ids(preds)
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
            if w.cls in MATRIX_METRICS:
                return w
        return order[0] if order else None

    def results(self):
        """[(watched, compute() on the host)] of every metric updated in this evaluation.
        compute() syncs across ranks (all_gather), so every rank calls it on the same metrics
        in the same order; the result is cached by torchmetrics, so the module's own compute()
        returns it without a second sync."""
        out = []
        for w in self.watched:
            m = w.metric
            if int(getattr(m, "_update_count", 0) or 0) == 0:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                value = m.compute()
            if _tensors.is_tensor(value):
                value = value.detach().cpu()
            out.append((w, value))
        return out
