"""Reading a batch's values as the frameworks read them: class ids from predictions (as
torchmetrics does), dataset indices and targets as integers (refused where torch and
torchmetrics would refuse them), without waiting for the device where a tensor stays on it."""

SHAPES = "[N] class ids, [N, C] logits or probabilities, or [N] / [N, 1] binary scores"


class ShardLensInputError(ValueError):
    """A batch whose values cannot be read as the frameworks read them (a float dataset
    index, a target that is not a class id): refused, since recording it would make a dump
    that reads as exact."""


def is_tensor(value):
    return hasattr(value, "detach") and hasattr(value, "device")


def to_list(values):
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
            out.extend(to_list(v) if isinstance(v, (list, tuple)) else [int(v)])
        return out
    return [int(values)]


def flat(values):
    """A tensor or ndarray flattened (a tensor stays on its device), else a list of ints."""
    if is_tensor(values):
        return values.detach().reshape(-1)
    if hasattr(values, "reshape") and hasattr(values, "dtype"):
        return values.reshape(-1)
    return to_list(values)


def length(values):
    return values.shape[0] if hasattr(values, "shape") else len(values)


def class_ids(prediction, threshold=0.5):
    """Class ids of one batch, as torchmetrics reads predictions:
    [N] integer ids; [N, C] scores (C > 1): argmax over C (MulticlassConfusionMatrix);
    [N] or [N, 1] floats: binary scores, sigmoid first when any value of the batch lies
    outside [0, 1], then > threshold (its binary metrics). Anything else: ValueError naming
    the shape, never a silent guess."""
    if isinstance(prediction, (list, tuple)) or not hasattr(prediction, "shape"):
        try:
            import numpy as np
        except ImportError:
            return to_list(prediction)
        prediction = np.asarray(prediction)
    shape = tuple(prediction.shape)
    if len(shape) == 0:  # one sample's prediction
        prediction, shape = prediction.reshape(1), (1,)
    if len(shape) == 2 and shape[1] == 1:
        prediction, shape = prediction.reshape(-1), (shape[0],)
    if hasattr(prediction, "detach"):  # a torch tensor: its own ops, so dtypes match torchmetrics
        p = prediction.detach()
        if len(shape) == 2:
            return to_list(p.argmax(dim=1))
        if len(shape) == 1:
            if p.is_floating_point():
                if not bool(((p >= 0) & (p <= 1)).all()):
                    p = p.sigmoid()
                return to_list(p > threshold)
            return to_list(p)
    else:  # numpy
        import numpy as np
        p = np.asarray(prediction)
        if len(shape) == 2:
            return to_list(p.argmax(axis=1))
        if len(shape) == 1:
            if p.dtype.kind == "f":
                if not ((p >= 0) & (p <= 1)).all():
                    p = 1.0 / (1.0 + np.exp(-p))
                return to_list(p > threshold)
            return to_list(p)
    raise ValueError("a prediction of shape %s cannot be read as class ids: expected %s"
                     % (list(shape), SHAPES))


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


def class_ids_lazy(prediction, threshold=0.5):
    """class_ids, without leaving the device for a tensor: the same reading, where the
    binary "any score outside [0, 1]" test picks sigmoid per batch by torch.where on the
    device instead of a Python branch (which would wait for the device)."""
    if not is_tensor(prediction):
        return class_ids(prediction, threshold)
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
                     % (list(shape), SHAPES))


def _host_array(values):
    """A list or tuple as a numpy array (its dtype tells floats), or without numpy as a flat
    list; other values as given."""
    if isinstance(values, (list, tuple)):
        try:
            import numpy as np
        except ImportError:
            return _flat_list(values)
        return np.asarray(values)
    return values


def _flat_list(values):
    out = []
    for v in values:
        out.extend(_flat_list(v) if isinstance(v, (list, tuple)) else [v])
    return out


def _is_float(values):
    if is_tensor(values):
        return values.is_floating_point()
    if isinstance(values, list):
        return any(isinstance(v, float) for v in values)
    return getattr(getattr(values, "dtype", None), "kind", None) == "f"


def _shown(value):
    return "%.7g" % value if isinstance(value, float) else repr(value)


def _first_value(values, where=None):
    """The first value of `values` (where `where` holds), for a message: read on the way to
    an error only."""
    if isinstance(values, list):
        chosen = [v for k, v in enumerate(values) if where is None or where[k]]
        return chosen[0] if chosen else None
    import numpy as np
    a = values.detach().cpu().numpy() if is_tensor(values) else np.asarray(values)
    a = a.reshape(-1)
    if where is not None:
        w = where.detach().cpu().numpy() if is_tensor(where) else np.asarray(where)
        a = a[w.reshape(-1)]
    return a[0].item() if len(a) else None


def any_true(mask):
    """Whether a mask of nonintegral() holds anything (a read of a device tensor)."""
    return bool(mask.any()) if hasattr(mask, "any") else any(mask)


def check_index(index, batch):
    """Dataset indices are integers: a float tensor or array is refused on its dtype, as
    torch refuses it as an index ("tensors used as indices must be long, int, byte or bool
    tensors"), with the batch and a value named; truncating 0.9 to 0 would record another
    sample."""
    index = _host_array(index)
    if _is_float(index):
        raise ShardLensInputError(
            "the dataset index of batch %d is a float %s (e.g. %s): torch indexes only with "
            "integer tensors, and truncating it would record another sample; pass the "
            "integer indices (IndexedDataset)"
            % (batch, _dtype_name(index), _shown(_first_value(index))))


def _dtype_name(values):
    return str(getattr(values, "dtype", type(values).__name__))


def nonintegral(target):
    """For a float target: a boolean tensor/array (a list without numpy), True where a value
    is not a finite integer (0.7, NaN, inf); None for an integer one (its dtype says enough, nothing is computed)."""
    target = _host_array(target)
    if not _is_float(target):
        return None
    if is_tensor(target):
        import torch
        return ~torch.isfinite(target) | (target != target.trunc())
    if isinstance(target, list):
        import math
        return [isinstance(v, float) and not (math.isfinite(v) and v == int(v)) for v in target]
    import numpy as np
    t = np.asarray(target)
    return ~np.isfinite(t) | (t != np.trunc(t))


def refuse_target(target, where, batch):
    """The error for a float target that holds a value not a class id: torchmetrics' binary
    metrics refuse such targets, its multiclass ones truncate them to another class."""
    return ShardLensInputError(
        "the target of batch %s holds %s, which is not a class id (a float %s): "
        "torchmetrics refuses such targets in its binary metrics and truncates them to "
        "another class in its multiclass ones, so the matrix would not be the one the "
        "dataset's labels give; pass integer class ids"
        % (batch, _shown(_first_value(target, where)), _dtype_name(target)))
