"""torchmetrics: what the metrics of an unchanged LightningModule see, read by wrapping
each instance's update() for one evaluation."""
import warnings

from . import _dense, _tensors


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
    "BinaryStatScores": "binary", "BinaryJaccardIndex": "binary",
    # Segmentation: the multiclass metrics above given [N, ...] targets; its usual metric:
    "MulticlassJaccardIndex": "multiclass",
    # Multilabel (torchmetrics' Multilabel*: [N, L, ...] 0/1 targets, sigmoid + threshold).
    "MultilabelConfusionMatrix": "multilabel", "MultilabelAccuracy": "multilabel",
    "MultilabelF1Score": "multilabel", "MultilabelFBetaScore": "multilabel",
    "MultilabelPrecision": "multilabel", "MultilabelRecall": "multilabel",
    "MultilabelStatScores": "multilabel", "MultilabelJaccardIndex": "multilabel",
}
# Metrics whose compute() is the confusion matrix itself: the reported matrix.
MATRIX_METRICS = ("MulticlassConfusionMatrix", "BinaryConfusionMatrix",
                  "MultilabelConfusionMatrix")
# Metrics whose `confmat` state, synced, is the reported matrix (compute() is a score).
CONFMAT_STATE_METRICS = ("MulticlassJaccardIndex", "MultilabelJaccardIndex",
                         "BinaryJaccardIndex")


def _is_torchmetric(module):
    return any(k.__name__ == "Metric" and k.__module__.startswith("torchmetrics")
               for k in type(module).__mro__)


def _metric_kind(metric):
    """(known class name, "multiclass" | "binary"), or (None, None) for a metric not read."""
    for k in type(metric).__mro__:
        if k.__name__ in KNOWN_METRICS and k.__module__.startswith("torchmetrics"):
            return k.__name__, KNOWN_METRICS[k.__name__]
    return None, None


def dense_inputs(w, target):
    """Whether a metric's batch is samples of many cells: [N, ...] multiclass targets
    (segmentation masks, token sequences), [N, H, W] binary masks (not [N] or [N, 1]), or any
    multilabel batch."""
    if w.kind == "binary":
        return target.ndim >= 2 and target.shape[1:].numel() > 1
    return w.kind == "multilabel" or (w.kind == "multiclass" and target.ndim >= 2)


def task_of(w, target):
    """The dump's task of a dense batch: multilabel, tokens ([N, T] targets with a negative
    ignore_index, Hugging Face's -100), else segmentation."""
    if w.kind == "multilabel":
        return "multilabel"
    if target.ndim == 2 and w.ignore_index is not None and w.ignore_index < 0:
        return "tokens"
    return "segmentation"


class _Watched:
    """One metric instance whose bound update() the callback wraps for one evaluation."""

    def __init__(self, name, metric, cls, kind):
        self.name, self.metric, self.cls, self.kind = name, metric, cls, kind
        self.original = None  # the instance's own update (torchmetrics' wrapped one)
        self.loader = None  # the dataloader_idx whose batches updated it
        self.failed = None

    @property
    def num_classes(self):
        """The matrix's classes: 2 L for a multilabel metric of L labels."""
        if self.kind == "binary":
            return 2
        if self.kind == "multilabel":
            labels = getattr(self.metric, "num_labels", None)
            return None if labels is None else 2 * int(labels)
        return getattr(self.metric, "num_classes", None)

    @property
    def ignore_index(self):
        return getattr(self.metric, "ignore_index", None)


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
        dense = dense_inputs(w, target)
        if not dense and w.ignore_index is not None:
            raise ValueError("ignore_index=%s with [N] targets drops samples, so its records "
                             "cannot be matched to dataset indices" % w.ignore_index)
        # A dense batch ([N, ...] targets: pixels, tokens; multilabel items) keeps its shape:
        # its samples' cells are counted from it (_dense.py).
        self.pending.setdefault(w.name, []).append(
            (target.detach() if dense else target.detach().reshape(-1), ids))
        if w.kind == "multiclass" and preds.ndim == target.ndim + 1 and target.ndim >= 1 and \
                getattr(w.metric, "top_k", 1) in (None, 1) and \
                preds.shape[1] == getattr(w.metric, "num_classes", None) and \
                not preds.requires_grad and preds.is_floating_point() and \
                not (dense and preds.device.type != "cpu" and
                     getattr(w.metric, "validate_args", False)):
            # Class ids in place of scores: only where torchmetrics' result cannot differ
            # (top-1, the metric's own class count; a wrong shape still reaches its checks).
            # Not for a dense batch on a GPU whose metric validates: given ids, torchmetrics
            # checks them with torch.unique, a sort and a host sync, where the argmax it
            # saves is cheap (on the CPU the argmax costs more than the check).
            if args:
                args = (ids,) + tuple(args[1:])
            else:
                kwargs = dict(kwargs, preds=ids)
        return args, kwargs

    @staticmethod
    def _reduce(w, preds, target, threshold):
        if w.kind == "multiclass":
            if preds.ndim == target.ndim + 1:
                preds = _tensors.argmax_ids(preds) if preds.ndim == 2 else \
                    _dense.argmax(preds, 1)
            if preds.shape != target.shape:
                raise ValueError("predictions of shape %s for targets of shape %s"
                                 % (list(preds.shape), list(target.shape)))
            return preds
        if w.kind == "multilabel":
            if preds.shape != target.shape or preds.ndim < 2:
                raise ValueError("multilabel predictions of shape %s for targets of shape %s"
                                 % (list(preds.shape), list(target.shape)))
            if preds.is_floating_point():
                import torch
                inside = ((preds >= 0) & (preds <= 1)).all()  # stays on the device: no sync
                preds = torch.where(inside, preds, preds.sigmoid()) > threshold
            return preds
        mask = dense_inputs(w, target)  # a binary segmentation: its ids keep the mask's shape
        if preds.numel() != target.numel() or mask and preds.shape != target.shape:
            raise ValueError("binary predictions of shape %s for targets of shape %s"
                             % (list(preds.shape), list(target.shape)))
        if not mask:
            preds = preds.reshape(-1)
        if preds.is_floating_point():
            import torch
            inside = ((preds >= 0) & (preds <= 1)).all()  # stays on the device: no sync
            preds = torch.where(inside, preds, preds.sigmoid()) > threshold
        return preds.long() if mask else preds

    def take(self):
        """The batch's {name: [(target, ids)]}, cleared for the next batch."""
        pending, self.pending, self._memo = self.pending, {}, []
        return pending

    def stream(self, pending):
        """The metric whose inputs a loader records: a confusion matrix first (its compute()
        is the reported matrix), then a Jaccard index (its confmat state is), else the first
        metric updated, in the module's order."""
        order = [w for w in self.watched if w.name in pending and w.failed is None]
        for kinds in (MATRIX_METRICS, CONFMAT_STATE_METRICS):
            for w in order:
                if w.cls in kinds:
                    return w
        return order[0] if order else None

    def synced_confmat(self, w):
        """A watched metric's `confmat` state summed over the ranks as its compute() syncs it
        (torchmetrics' sync_context: an all_gather on every rank, in the same order), on the
        host; the rank's own state is back after it."""
        m = w.metric
        with m.sync_context(dist_sync_fn=m.dist_sync_fn, process_group=m.process_group,
                            should_sync=getattr(m, "sync_on_compute", True),
                            should_unsync=True):
            return m.confmat.detach().cpu().clone()

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
