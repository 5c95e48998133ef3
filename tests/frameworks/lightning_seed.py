"""Lightning 2.6 oracle: the seed's own configuration, against simulate and the dumps.

Usage: lightning_seed.py SHARDLENS_CLI. One real Trainer (lightning_worker.py seed):
Trainer(accelerator="cpu", devices=4, strategy=DDPStrategy(find_unused_parameters=True),
precision="bf16-mixed", limit_val_batches=10, reload_dataloaders_every_n_epochs=1,
num_sanity_val_steps=2, max_epochs=3) with two validation loaders, a shuffled one over 103
samples and an unshuffled one over 101 (B=2: 13 batches per rank, cut to 10), torchmetrics'
MulticlassConfusionMatrix updated in validation_step and computed by hand in
on_validation_epoch_end, MulticlassAccuracy logged with self.log. validation_step returns
only the logits: ShardLensCallback takes the targets from the batch and the dataset indices
from the injected DistributedSampler. (num_sanity_val_steps=0: lightning_variants.py.)

Per rank, per epoch, per loader: the metric's local state and compute() equal simulate's
per-rank and synced matrices, and the imported dumps (indices included) equal both. What
Lightning does with the sanity check, asserted: the logged MulticlassAccuracy is reset after
it (0 updates at epoch 0's start), a metric the module does not reset keeps the sanity
batches (they leak into epoch 0: simulate --sanity-leak), and the sanity check evaluates
min(2, 10) batches of epoch 0's order.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import numpy as np  # noqa: E402

import lightning_common as lc  # noqa: E402
from lightning_common import W, check_equal  # noqa: E402

B, LIMIT, EPOCHS, SANITY = 2, 10, 3, 2
LOADERS = [("val", True, 103), ("val2", False, 101)]  # (table, shuffled, n) per dataloader_idx


def sim(cli, out, d, epoch, limit=LIMIT, extra=()):
    table, shuffled, _ = LOADERS[d]
    return lc.simulate(cli, os.path.join(out, table), B, limit, shuffle=shuffled, seed=0,
                       epoch=epoch, extra=extra)


def check_metric(what, ranks, s):
    for r in range(W):
        check_equal("%s: rank %d local state" % (what, r), ranks[r]["local"], s["per_rank"][r])
        check_equal("%s: rank %d compute()" % (what, r), ranks[r]["synced"], s["synced"])


def check_dump_records(what, files, ranks, sanity):
    """The dump holds what the rank's batches carried (indices replayed from the sampler)."""
    for r, f in enumerate(files):
        with np.load(f) as d:
            check_equal("%s: rank %d dump indices" % (what, r), d["index"].tolist(),
                        ranks[r]["indices"])
            check_equal("%s: rank %d dump records' matrix" % (what, r),
                        frameworks.records_matrix(d, len(ranks[r]["local"])), ranks[r]["local"])
            flags = d["flags"].tolist()
            assert all(bool(x & 2) == sanity for x in flags), (what, flags)


def check_sanity(cli, out, evals):
    for d in range(len(LOADERS)):
        ranks = evals[("fit", True, 0, 0, d)]
        s = sim(cli, out, d, 0, limit=SANITY)
        check_metric("sanity check, loader %d" % d, ranks, s)
        files = lc.dump_files(out, sanity=True, dl=d)
        check_dump_records("sanity, loader %d" % d, files, ranks, sanity=True)
        lc.check_like(cli, os.path.join(out, LOADERS[d][0]), files, ranks)
        st = lc.settings_of(files[0])
        check_equal("sanity settings", (st["sanity"], st["sanity_steps"], st["epoch"],
                                         st["sampler_epoch"]), (True, SANITY, 0, 0))
        for r in range(W):
            e = evals[("fit", False, 0, 0, d)][r]
            # Lightning resets a metric logged with self.log after the sanity check ...
            check_equal("logged accuracy updates at epoch 0", e["acc_updates_at_start"][d], 0)
            # ... but not one the module keeps unlogged: its sanity batches are still there.
            check_equal("unreset metric updates at epoch 0", e["leaky_updates_at_start"][d],
                        SANITY)
        leak = sim(cli, out, d, 0, extra=["--sanity-leak", "--sanity-steps", str(SANITY)])
        for r in range(W):
            e = evals[("fit", False, 0, 0, d)][r]
            check_equal("sanity leak, loader %d rank %d" % (d, r), e["leaky_local"],
                        leak["per_rank"][r])
            check_equal("sanity leak compute()", e["leaky_synced"], leak["synced"])
        assert "sanity-leak" in lc.patterns(leak), lc.patterns(leak)
    print("sanity check: %d batches of epoch 0's order; the logged metric is reset after it, "
          "an unreset one leaks them into epoch 0 (= simulate --sanity-leak)" % SANITY)


def check_epochs(cli, out, evals):
    for d, (table, shuffled, n) in enumerate(LOADERS):
        per_epoch = []
        for epoch in range(EPOCHS):
            ranks = evals[("fit", False, epoch, 0, d)]
            s = sim(cli, out, d, epoch)
            per_epoch.append(s)
            check_metric("epoch %d loader %d" % (epoch, d), ranks, s)
            for r in range(W):
                check_equal("sampler epoch", ranks[r]["samplers"][d]["epoch"], epoch)
                if epoch:  # once reset, the unreset metric equals the other one
                    check_equal("epoch %d: leaky" % epoch, ranks[r]["leaky_local"],
                                ranks[r]["local"])
            files = lc.dump_files(out, epoch=epoch, dl=d)
            check_dump_records("epoch %d loader %d" % (epoch, d), files, ranks, sanity=False)
            lc.check_like(cli, os.path.join(out, table), files, ranks)
            report = lc.import_and_diagnose(cli, files, os.path.join(out, table), os.path.join(
                out, "e%d_d%d.slrun" % (epoch, d)))
            check_equal("imported per-rank", report["per_rank"], s["per_rank"])
            check_equal("imported synced", report["synced"], s["synced"])
            want = {"batch-limit-subset"} | ({"shuffled-eval"} if shuffled else set())
            assert want <= set(lc.patterns(report)), (epoch, d, lc.patterns(report))
            st = lc.settings_of(files[2])
            expect = {"sampler": "distributed", "shuffle": shuffled, "seed": 0,
                      "sampler_epoch": epoch, "batch_size": B, "limit_batches": "10",
                      "sanity_steps": SANITY, "sanity": False, "dataloader_idx": d,
                      "validation_in_epoch": 0, "val_check_interval": "1.0", "rank": 2,
                      "world_size": W, "dataset_size": n, "epoch": epoch}
            check_equal("settings", {k: st[k] for k in expect}, expect)
        if shuffled:  # the rows drift between epochs while the total stays
            totals = {sum(map(sum, s["synced"])) for s in per_epoch}
            assert len(totals) == 1 and len({str(s["synced"]) for s in per_epoch}) > 1
    print("%d epochs x %d loaders (shuffled, unshuffled): every rank's state and compute() = "
          "simulate = imported dumps; indices replayed from the sampler = the batches' own"
          % (EPOCHS, len(LOADERS)))


def main():
    cli = sys.argv[1]
    with lc.workdir() as out:
        for name, (n, mult) in (("val", (103, 7)), ("val2", (101, 3))):
            lc.write_table(out, name, n, mult)
        log, results = lc.launch("seed", out)
        assert "ShardLens:" not in log, log[log.index("ShardLens:") - 200:][:1000]
        evals = lc.evaluations(results)
        check_equal("evaluations", sorted(evals), sorted(
            [("fit", True, 0, 0, d) for d in (0, 1)]
            + [("fit", False, e, 0, d) for e in range(EPOCHS) for d in (0, 1)]))
        check_sanity(cli, out, evals)
        check_epochs(cli, out, evals)
    print("PASS")


if __name__ == "__main__":
    main()
