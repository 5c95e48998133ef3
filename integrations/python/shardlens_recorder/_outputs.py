"""What the user's code hands a front end: the value validation_step (test_step) returns and
its batch for Lightning, what gather_for_metrics is given for Accelerate; read into the
batch's index (or None), predictions and targets, or Unreadable saying what to change."""

# Where a front end finds each value in a dict the user's code returns (or a batch).
DEFAULT_KEYS = {
    "prediction": ("prediction", "preds", "pred", "logits", "probs", "y_hat", "output"),
    "target": ("target", "targets", "y", "label", "labels"),
    "index": ("index", "indices", "idx"),
}


class Unreadable(Exception):
    """A batch a front end cannot record; its message says what to change."""


def pick(mapping, names):
    for name in names:
        if name in mapping:
            return mapping[name]
    return None


def _batch_target(batch, keys, batch_target):
    if batch_target is not None:
        return batch_target(batch)
    if isinstance(batch, dict):
        return pick(batch, keys["target"])
    if isinstance(batch, (list, tuple)) and len(batch) >= 2:
        return batch[-1]
    return None


def read_step(outputs, batch, keys, batch_target=None):
    """(index or None, target, prediction) of one batch from what validation_step (test_step)
    returned and the batch (its target, its index), or Unreadable. keys: role -> the names
    looked for (DEFAULT_KEYS, or ShardLensCallback(keys=)); batch_target: batch -> target."""
    index = target = pred = None
    if isinstance(outputs, dict):
        pred = pick(outputs, keys["prediction"])
        target = pick(outputs, keys["target"])
        index = pick(outputs, keys["index"])
        if pred is None:
            raise Unreadable(
                "validation_step returned a dict without a prediction (keys %s; looked "
                "for %s): name it with ShardLensCallback(keys={'prediction': ...})"
                % (sorted(map(str, outputs)), "/".join(keys["prediction"])))
    elif isinstance(outputs, (list, tuple)) and len(outputs) in (2, 3):
        if len(outputs) == 2:
            pred, target = outputs
        else:
            index, pred, target = outputs
    elif hasattr(outputs, "shape") and len(outputs.shape) == 0:
        raise Unreadable(
            "validation_step returned a scalar (a loss?): return the predictions (a "
            "tensor), a tuple (preds, target), or a dict with a prediction and a target")
    elif hasattr(outputs, "shape"):
        pred = outputs
    else:
        raise Unreadable(
            "validation_step returned %s: return the predictions (a tensor), a tuple "
            "(preds, target), or a dict with a prediction and a target"
            % ("None" if outputs is None else type(outputs).__name__))
    if target is None:
        target = _batch_target(batch, keys, batch_target)
        if target is None:
            raise Unreadable(
                "no targets: neither the step's output nor the batch (%s) holds them; "
                "return them (keys={'target': ...}) or pass batch_target=" % (
                    type(batch).__name__))
    if index is None and isinstance(batch, dict):
        index = pick(batch, keys["index"])
    return index, target, pred


def read_gathered(data):
    """(index or None, predictions, targets) of what gather_for_metrics is given."""
    if isinstance(data, dict):
        index = pick(data, DEFAULT_KEYS["index"])
        pred = pick(data, ("predictions",) + DEFAULT_KEYS["prediction"])
        target = pick(data, ("references",) + DEFAULT_KEYS["target"])
    elif isinstance(data, (list, tuple)) and len(data) in (2, 3):
        index, pred, target = data if len(data) == 3 else (None,) + tuple(data)
    else:
        raise Unreadable("gather_for_metrics got %s: pass (predictions, targets), "
                          "(index, predictions, targets) or a dict" % type(data).__name__)
    if pred is None or target is None:
        raise Unreadable("gather_for_metrics got no predictions/targets (keys %s)"
                          % sorted(map(str, data)))
    return index, pred, target
