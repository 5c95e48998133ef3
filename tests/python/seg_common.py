"""The synthetic evaluation sets of seg_lightning_worker.py, shared with its test: each item is
a pure function of its index, so the test computes what the real metrics should hold without
running the Trainer.

Segmentation: SEG_SIZES images of H x W pixels, C classes in horizontal bands of uneven
heights (class 0 most common), IGNORE (255) over a left strip of (i % 9) columns and over the
whole of every 37th image (a sample of no cells); the prediction is the target with a block of
pixels shifted to another class. The input is the prediction one-hot (x 4): the module's
logits, so argmax gives it back.

Multilabel: ML_SIZE items of L labels, target bits from the index, ML_IGNORE (-1) on label
i % 5 (none when i % 5 == 4); the prediction logits agree with the target except label i % 7.
"""
import torch

C, H, W = 5, 48, 64
IGNORE = 255
# Loader 1's metric counts one class more, which no image shows (its logits get a low
# channel): a loader's recorder takes its own metric's classes, not the first loader's.
C1 = C + 1
SEG_SIZES = (203, 97)  # loader 0 (shuffled, limited), loader 1 (sequential, not limited)
L = 4
ML_SIZE = 101
ML_IGNORE = -1


def seg_target(i):
    t = torch.zeros(H, W, dtype=torch.int64)
    row = 0
    for band in range(4):
        height = 6 + (i * (band + 3)) % 11 if band < 3 else H
        cls = 0 if band == 0 else (i + band * 2) % C
        t[row:row + height] = cls
        row += height
        if row >= H:
            break
    t[:, :i % 9] = IGNORE
    if i % 37 == 5:
        t[:] = IGNORE
    return t


def seg_prediction(i):
    t = seg_target(i)
    p = t.clone()
    p[p == IGNORE] = (i % C)
    r0, c0 = (i * 5) % (H - 8), (i * 11) % (W - 12)
    block = p[r0:r0 + 8, c0:c0 + 12]
    p[r0:r0 + 8, c0:c0 + 12] = (block + 1 + i % 2) % C
    return p


def seg_logits(i):
    return torch.nn.functional.one_hot(seg_prediction(i), C).permute(2, 0, 1).float() * 4


def with_extra_class(logits):
    """[N, C, ...] logits -> [N, C1, ...]: the extra class never the argmax."""
    return torch.cat([logits, torch.full_like(logits[:, :1], -10.0)], 1)


def seg_classes(loader):
    return C1 if loader == 1 else C


def ml_target(i):
    bits = torch.tensor([((i >> l) ^ ((3 * i) >> (l + 1))) & 1 for l in range(L)])
    if i % 5 < L:
        bits[i % 5] = ML_IGNORE
    return bits


def ml_logits(i):
    t = ml_target(i).clamp(min=0).float()
    z = (2 * t - 1) * (1.0 + torch.arange(L, dtype=torch.float32))
    if i % 7 < L:
        z[i % 7] = -z[i % 7]
    return z
