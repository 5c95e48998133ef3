"""The recorder's accelerate_padding_flags against Accelerate's own batches.

tests/data/reference/accelerate_vectors.json holds, for 66 configurations, the batches each
rank got from Accelerate's BatchSamplerShard (commit 16cb6eb). Without shuffling the order is
the identity, so a sample's stream position is known: the flags must mark exactly the
positions past len(dataset), i.e. the cycled even_batches copies. No torch needed.
"""
import json
import os

from shardlens_recorder import PADDING, accelerate_padding_flags

HERE = os.path.dirname(os.path.abspath(__file__))


def test_flags_mark_the_cycled_copies():
    with open(os.path.join(HERE, "..", "data", "reference", "accelerate_vectors.json")) as f:
        cases = json.load(f)["cases"]
    checked = bad = 0
    for c in cases:
        if c["shuffle"] or not c["even_batches"]:
            continue
        n, w, b = c["n"], c["world_size"], c["batch_size"]
        for rank, batches in enumerate(c["ranks"]):
            for step, batch in enumerate(batches):
                flags = accelerate_padding_flags(step, rank, w, b, n, len(batch),
                                                 split_batches=c["split_batches"])
                # Identity order: a stream position p holds sample p % n; the copies are the
                # positions past n, which (cycling from the start) repeat the first samples.
                slice_len = b // w if c["split_batches"] else b
                start = (step * b + rank * slice_len) if c["split_batches"] \
                    else (step * w + rank) * b
                for k, index in enumerate(batch):
                    want = PADDING if start + k >= n else 0
                    if index != (start + k) % n or flags[k] != want:
                        print("FAIL", {k2: c[k2] for k2 in ("n", "world_size", "batch_size",
                                                             "split_batches")}, rank, step)
                        bad += 1
                    checked += 1
    print("%d positions checked, %d wrong" % (checked, bad))
    assert not bad and checked > 0, "%d positions checked, %d wrong" % (checked, bad)
