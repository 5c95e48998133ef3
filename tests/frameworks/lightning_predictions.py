"""The callback reads predictions as torchmetrics does (no Trainer: fast).

Usage: lightning_predictions.py. For every shape ShardLensCallback accepts, the class ids the
recorder derives give the same confusion matrix as torchmetrics' own metric on the same
tensors: [N] ids and [N, C] logits/probabilities (bf16 too) against
MulticlassConfusionMatrix; [N] and [N, 1] float scores, probabilities and logits (sigmoid
when any value of the batch is outside [0, 1]), at the default threshold and at 0.3, against
BinaryConfusionMatrix. Shapes it must refuse ([N, C, 1, 1], [N, 2, 3]) raise a ValueError
naming the shape. And what the callback reads from a step's return value: a tensor with the
batch's targets, (preds, target), (index, preds, target), dicts under default or given key
names; None, a scalar, a dict without a prediction, no targets: each refused, saying why.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()
sys.path.insert(0, frameworks.RECORDER_DIR)

import torch  # noqa: E402
from torchmetrics.classification import (BinaryConfusionMatrix,  # noqa: E402
                                         MulticlassConfusionMatrix)

from shardlens_recorder import ShardLensCallback, ShardLensRecorder, _outputs  # noqa: E402

N, C = 64, 4


def recorder_matrix(target, preds, classes, threshold=0.5):
    rec = ShardLensRecorder("/nonexistent", num_classes=classes, rank=0, world_size=1,
                            threshold=threshold)
    rec.update(torch.arange(len(target)), target, preds)
    return rec.local_matrix()


def main():
    g = torch.Generator().manual_seed(3)
    target = torch.randint(0, C, (N,), generator=g)
    logits = torch.randn(N, C, generator=g) * 3
    cases = {"[N] ids": torch.randint(0, C, (N,), generator=g), "[N, C] logits": logits,
             "[N, C] probabilities": logits.softmax(1), "[N, C] bf16": logits.bfloat16()}
    for name, preds in cases.items():
        m = MulticlassConfusionMatrix(C)
        m.update(preds, target)
        assert recorder_matrix(target, preds, C) == m.compute().tolist(), name
    binary = torch.randint(0, 2, (N,), generator=g)
    scores = torch.randn(N, generator=g) * 2
    cases = {"[N] logits": scores, "[N] probabilities": scores.sigmoid(),
             "[N, 1] logits": scores[:, None], "[N, 1] probabilities": scores.sigmoid()[:, None],
             "[N] ids": binary.flip(0), "[N] bool": binary.flip(0).bool()}
    for threshold in (0.5, 0.3):
        for name, preds in cases.items():
            m = BinaryConfusionMatrix(threshold=threshold)
            m.update(preds.reshape(N) if preds.dim() == 2 else preds, binary)
            got = recorder_matrix(binary, preds, 2, threshold)
            assert got == m.compute().tolist(), (name, threshold, got, m.compute().tolist())
    for shape in ((N, C, 1, 1), (N, 2, 3)):
        try:
            recorder_matrix(target, torch.zeros(shape), C)
        except ValueError as e:
            assert str(list(shape)) in str(e), e
        else:
            raise AssertionError("a prediction of shape %s was accepted" % (shape,))
    check_outputs()
    print("PASS: ids, logits, probabilities (multiclass and binary, thresholds 0.5 and 0.3) "
          "read as torchmetrics does; 4-D and 3-D refused with the shape")


def check_outputs():
    """What ShardLensCallback reads from a step's return value and the batch."""
    cb = ShardLensCallback(ShardLensRecorder("/nonexistent"))
    x, y, idx, logits = torch.zeros(3, 2), torch.tensor([1, 0, 2]), torch.tensor([7, 8, 9]), \
        torch.eye(3)
    def read(outputs, batch, callback=cb):  # what the callback reads, with its keys
        return _outputs.read_step(outputs, batch, callback.keys, callback.batch_target)
    assert read(logits, (x, y)) == (None, y, logits)  # targets: the batch's last element
    assert read((logits, y), None) == (None, y, logits)  # (preds, target)
    assert read((idx, logits, y), None) == (idx, y, logits)  # (index, preds, target)
    got = read({"logits": logits}, {"x": x, "label": y, "idx": idx})  # dict batch
    assert got[0] is idx and got[1] is y and got[2] is logits
    for bad, words in ((None, "returned None"), (torch.tensor(0.5), "a scalar"),
                       ({"loss": logits}, "without a prediction"),
                       (logits, "no targets")):
        try:
            read(bad, x if words == "no targets" else (x, y))
        except _outputs.Unreadable as e:
            assert words in str(e), (words, str(e))
        else:
            raise AssertionError("read %r" % (bad,))
    custom = ShardLensCallback(ShardLensRecorder("/nonexistent"),
                               keys={"prediction": "scores", "target": ["gt"]})
    assert read({"scores": logits, "gt": y}, None, custom) == (None, y, logits)


if __name__ == "__main__":
    main()
