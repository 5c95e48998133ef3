"""Token classification (NER, POS, any per-token sequence task) as the front ends record it:
one sequence is one sample, whatever the sampler deals, pads or duplicates, and its cells are
its tokens' (label, prediction) pairs, the tokens labelled ignore_index (-100: a collator's
padding, the Trainer's pad_across_processes, sub-word continuations) left out.

A batch is labels [B, T] with logits [B, T, C] (a transformers model's output, argmax over the
last dimension) or predicted ids [B, T]. The recorder counts each batch's tokens as one
histogram (_dense.py), written at save() as the dump's cell arrays (dump_format.json): a
duplicated sequence is a duplicated record whose tokens count again wherever it is counted.
"""
from . import _tensors
from ._recorder import ShardLensRecorder
from ._tensors import ShardLensInputError

TASK = "tokens"
IGNORE_INDEX = -100  # transformers' and torch's CrossEntropyLoss default


def is_token_batch(prediction, target):
    """Whether (prediction, target) is a token batch: integer labels [B, T] with scores
    [B, T, C] or ids [B, T] (a classification's target is [N]; a multilabel's [N, L] comes
    with float scores of its own shape)."""
    t_shape = tuple(getattr(target, "shape", ()))
    p_shape = tuple(getattr(prediction, "shape", ()))
    if len(t_shape) != 2 or _is_float(target):
        return False
    if len(p_shape) == 3:
        return p_shape[:2] == t_shape
    return p_shape == t_shape and not _is_float(prediction)


def is_mask_batch(prediction, target):
    """Whether (prediction, target) is a segmentation batch: integer masks [B, H, W] (or more
    dimensions) with ids of their shape or scores [B, C, H, W] (torchmetrics' class
    dimension 1)."""
    t_shape = tuple(getattr(target, "shape", ()))
    p_shape = tuple(getattr(prediction, "shape", ()))
    if len(t_shape) < 3 or _is_float(target):
        return False
    if len(p_shape) == len(t_shape) + 1:
        return p_shape[0] == t_shape[0] and p_shape[2:] == t_shape[1:]
    return p_shape == t_shape and not _is_float(prediction)


def _is_float(values):
    if _tensors.is_tensor(values):
        return values.is_floating_point()
    return getattr(getattr(values, "dtype", None), "kind", None) == "f"


def token_ids(prediction):
    """The predicted ids [B, T] of a token batch (argmax over the classes of [B, T, C], as
    the Hugging Face token-classification examples read logits), on their device."""
    if len(prediction.shape) == 3:
        if _tensors.is_tensor(prediction):
            return prediction.detach().argmax(dim=-1)
        return prediction.argmax(axis=-1)
    return prediction.detach() if _tensors.is_tensor(prediction) else prediction


def token_matrix(target, prediction, num_classes, ignore_index=IGNORE_INDEX):
    """The confusion matrix of every non-ignored token of (labels, scores or ids), computed
    where the tensors are (one bincount): what a metric fed them counts. Masks [B, H, W]
    with scores [B, C, H, W] take their class on dimension 1, as torchmetrics does."""
    import torch
    if len(prediction.shape) == len(target.shape) + 1 and len(target.shape) >= 3:
        ids = prediction.detach().argmax(dim=1)
    else:
        ids = token_ids(prediction)
    t = torch.as_tensor(target).reshape(-1).long()
    p = torch.as_tensor(ids).reshape(-1).long().to(t.device)
    c = int(num_classes)
    inside = (t != ignore_index) & (t >= 0) & (t < c) & (p >= 0) & (p < c)
    return torch.bincount((t * c + p)[inside], minlength=c * c).reshape(c, c)


class TokenRecorder(ShardLensRecorder):
    """ShardLensRecorder that also takes a token batch whose class count is not known yet:
    update_tokens(index, labels [B, T], logits [B, T, C] or ids [B, T], flags) records B
    samples and their tokens (add_dense, task "tokens", the classes on the last dimension).
    Predicted ids without num_classes (the course's loop gathers argmax ids) wait, in order,
    until save(), where the largest id seen tells the class count."""

    def __init__(self, *args, ignore_index=IGNORE_INDEX, **kwargs):
        super().__init__(*args, ignore_index=ignore_index, **kwargs)

    def reset(self, epoch=None):
        super().reset(epoch)
        self._waiting = []  # (index, labels, ids, flags) of batches before the class count

    @property
    def task(self):
        """"tokens" once a token batch was recorded since reset(), else None."""
        if self._cells is not None:
            return self._cells.task
        return TASK if self._waiting else None

    @property
    def count(self):
        return self._count + sum(_tensors.length(t) for _, t, _, _ in self._waiting)

    def update_tokens(self, index, target, prediction, flags=None):
        if self.task is None and self._count:
            raise ShardLensInputError("batch %d holds sequences ([B, T] labels) after batches "
                                      "of single labels" % self._batches)
        if tuple(getattr(target, "shape", ())) != tuple(prediction.shape[:2]) or \
                len(target.shape) != 2:
            raise ShardLensInputError(
                "batch %d: labels %s and predictions %s are not one prediction per token" % (
                    self._batches, list(getattr(target, "shape", ())), list(prediction.shape)))
        if self.num_classes is None and len(prediction.shape) == 3:
            self.num_classes = int(prediction.shape[-1])
        if self.num_classes is None:
            self._waiting.append((index, target.detach(), token_ids(prediction), flags))
            return
        self._add_waiting()
        self.add_dense(index, target, prediction, flags=flags, task=TASK, class_dim=-1)

    def update_masks(self, index, target, prediction, flags=None):
        """A segmentation batch: masks [B, H, W], ids of their shape or scores [B, C, H, W];
        each image one sample whose pixels are its cells (add_dense, task segmentation)."""
        if self.task is None and self._count:
            raise ShardLensInputError("batch %d holds masks ([B, H, W] targets) after batches "
                                      "of single labels" % self._batches)
        if self.num_classes is None and len(prediction.shape) == len(target.shape) + 1:
            self.num_classes = int(prediction.shape[1])
        if self.num_classes is None:
            raise ShardLensInputError(
                "batch %d: masks with predicted ids and no class count: pass num_classes= to "
                "watch (or gather the scores [B, C, H, W])" % self._batches)
        self.add_dense(index, target, prediction, flags=flags, task="segmentation", class_dim=1)

    def classes(self):
        """The class count: num_classes, else the largest label or id recorded plus one."""
        if self.num_classes is None and self._waiting:
            import torch
            top = max(int(torch.maximum(t.max(), p.max())) for _, t, p, _ in self._waiting)
            self.num_classes = max(top, 0) + 1
        return self.num_classes

    def _add_waiting(self):
        waiting, self._waiting = self._waiting, []
        for index, target, ids, flags in waiting:
            self.add_dense(index, target, ids, flags=flags, task=TASK)

    def save(self, epoch=None):
        if self._waiting:
            self.classes()
            self._add_waiting()
        return super().save(epoch)
