"""Lightning 2.6 oracle: precision="16-mixed" on CPU, val_check_interval=0.5, a dict with
its own key names, trainer.validate(dataloaders=X) and trainer.test after fit, against
simulate and the ShardLensCallback dumps.

Usage: lightning_variants.py SHARDLENS_CLI. One real Trainer (lightning_worker.py variants):
4 CPU ranks over gloo, DDPStrategy(find_unused_parameters=True), limit_val_batches=10,
reload_dataloaders_every_n_epochs=1, num_sanity_val_steps=0, max_epochs=2, a shuffled
validation loader over 103 samples (B=2), validation_step returning {"scores", "gt", ...}
(ShardLensCallback(keys=...)), dumps in .npz and .pt; then trainer.validate over 37 other
samples, unshuffled, and trainer.test over them shuffled. Two more callbacks are given what
they cannot read (a 4-D prediction, a key the dict lacks).

What it asserts Lightning does: 16-mixed on CPU becomes bf16-mixed with a warning (bfloat16
logits under autocast); the val sampler's epoch is the fit epoch for both validations of an
epoch, so they evaluate the same subset; validate() after fit uses its own loader, whose
sampler Lightning sets to epoch = the completed fit epochs. Every rank's local confmat and
compute() equal simulate's per-rank and synced matrices, and so do the imported dumps.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import lightning_common as lc  # noqa: E402
from lightning_common import W, check_equal  # noqa: E402

B, LIMIT, EPOCHS = 2, 10, 2


def check_precision(log, results):
    assert "AMP with fp16 is not supported on CPU. Using `precision='bf16-mixed'` instead" in log, \
        "no 16-mixed -> bf16-mixed warning in:\n" + log[-3000:]
    assert "precision plugin: MixedPrecision" in log
    for r in range(W):
        for e in results[r]:
            check_equal("logits dtype (rank %d)" % r, (e["dtype"], e["autocast"]),
                        ("torch.bfloat16", True))
    print("16-mixed on CPU: downgraded to bf16-mixed with a warning; bfloat16 logits, "
          "int64 confmat exact")


def check_unreadable(log, out):
    """A 4-D prediction and a dict without the named key: each said once (rank 0 only, one
    message for every validation), no dump written, fit finished."""
    for bad, text in (("bad4d", "ShardLens: a prediction of shape [2, 5, 1, 1] cannot be read"),
                      ("nothing", "ShardLens: validation_step returned a dict without a "
                                  "prediction (keys ['bad4d', 'gt', 'loss_like', 'scores']")):
        check_equal("times said: " + text, log.count(text), 1)
        assert not os.path.exists(os.path.join(out, bad)) or not os.listdir(
            os.path.join(out, bad)), os.listdir(os.path.join(out, bad))
    print("unreadable outputs (a 4-D prediction, a missing key): said once on rank 0, no dump, "
          "fit finished")


def check_fit(cli, out, evals):
    for epoch in range(EPOCHS):
        table = os.path.join(out, "val")
        sim = lc.simulate(cli, table, B, LIMIT, shuffle=True, seed=0, epoch=epoch)
        both = lc.simulate(cli, table, B, LIMIT, shuffle=True, seed=0, epoch=epoch,
                           extra=["--validations-per-epoch", "2"])["epochs"]
        assert len(both) == 2
        for val in (0, 1):
            ranks = evals[("fit", False, epoch, val, 0)]
            for r in range(W):
                e = ranks[r]
                check_equal("sampler epoch", e["samplers"][0]["epoch"], epoch)
                check_equal("rank %d local, epoch %d val %d" % (r, epoch, val), e["local"],
                            sim["per_rank"][r])
                check_equal("rank %d local (--validations-per-epoch)" % r, e["local"],
                            both[val]["per_rank"][r])
                check_equal("rank %d compute()" % r, e["synced"], sim["synced"])
                check_equal("state restored after compute()", e["local_after_compute"],
                            e["local"])
                total = sum(map(sum, e["synced"]))
                trace = sum(e["synced"][k][k] for k in range(lc.C))
                assert abs(e["logged_acc0"] - trace / total) < 1e-6, (e["logged_acc0"], trace)
            # The repeated subset: both validations of the epoch evaluated the same indices.
            check_equal("indices of validation 1 vs 0", ranks[0]["indices"],
                        evals[("fit", False, epoch, 0, 0)][0]["indices"])
            files = lc.dump_files(out, epoch=epoch, val=val)
            lc.check_like(cli, table, files, ranks)
            report = lc.import_and_diagnose(cli, files, os.path.join(out, "val"),
                                            os.path.join(out, "fit%d_%d.slrun" % (epoch, val)))
            check_equal("imported per-rank", report["per_rank"], sim["per_rank"])
            check_equal("imported synced", report["synced"], sim["synced"])
            found = lc.patterns(report)
            assert {"batch-limit-subset", "shuffled-eval"} <= set(found), found
            s = lc.settings_of(files[1])
            want = {"framework": "lightning", "sampler": "distributed", "inner_sampler": None,
                    "shuffle": True, "seed": 0, "sampler_epoch": epoch,
                    "sampler_drop_last": False, "loader_drop_last": False, "batch_size": B,
                    "limit_batches": "10", "sanity_steps": 0, "sanity": False,
                    "stage": "validate", "dataloader_idx": 0, "validation_in_epoch": val,
                    "val_check_interval": "0.5", "world_size": W, "rank": 1,
                    "dataset_size": 103, "num_classes": lc.C, "epoch": epoch}
            check_equal("settings_json", {k: s[k] for k in want}, want)
            assert set(s) == set(lc.SETTINGS_KEYS), sorted(s)
            check_pt_settings(files[1])
            if epoch == 0 and val == 0:
                check_pt_import(cli, out, files, sim)
    print("val_check_interval=0.5: 2 validations per epoch x %d epochs, the same subset twice; "
          "every rank's state and compute() = simulate = imported dumps" % EPOCHS)


def check_pt_import(cli, out, files, sim):
    """The .pt twins (torch 2.x's torch.save) import to the same matrices, where this build
    has its LibTorch plugin to read them."""
    import subprocess
    pts = [f[:-len("npz")] + "pt" for f in files]
    run = os.path.join(out, "pt.slrun")
    proc = subprocess.run([cli, "import", *pts, "--dataset", "npy:" + os.path.join(out, "val")
                           + "_labels.npy", "--out", run], capture_output=True, text=True)
    if proc.returncode != 0 and "torch" in (proc.stdout + proc.stderr).lower():
        print("note: .pt dumps not imported here: " + (proc.stdout + proc.stderr).strip()[-300:])
        return
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = lc.diagnose(cli, run)
    check_equal(".pt imported synced", report["synced"], sim["synced"])
    check_equal(".pt imported per-rank", report["per_rank"], sim["per_rank"])


def check_pt_settings(npz):
    import torch
    pt = torch.load(npz[:-len("npz")] + "pt")
    check_equal(".pt settings_json", bytes(pt["settings_json"].tolist()),
                bytes(lc.settings_of_raw(npz)))


def check_validate_after_fit(cli, out, evals):
    import numpy as np
    ranks = evals[("validate", False, EPOCHS, 0, 0)]
    sim = lc.simulate(cli, os.path.join(out, "x"), B, LIMIT, shuffle=False, epoch=EPOCHS)
    for r in range(W):
        e = ranks[r]
        check_equal("validate(): the loader in use", e["samplers"][0]["dataset"], 37)
        check_equal("validate(): sampler epoch = completed fit epochs", e["samplers"][0]["epoch"],
                    EPOCHS)
        check_equal("validate() rank %d local" % r, e["local"], sim["per_rank"][r])
        check_equal("validate() compute()", e["synced"], sim["synced"])
    files = lc.dump_files(out, epoch=EPOCHS)
    lc.check_like(cli, os.path.join(out, "x"), files, ranks)
    for r, f in enumerate(files):
        with np.load(f) as d:
            check_equal("validate() dump dataset_size", int(d["dataset_size"]), 37)
            # 37 = 4 * 9 + 1: positions 37..39 (ranks 1..3's last sample) repeat the start.
            padded = [bool(x & 1) for x in d["flags"].tolist()]
            check_equal("validate() rank %d padding flags" % r, padded,
                        [False] * 9 + [r >= 1])
    report = lc.import_and_diagnose(cli, files, os.path.join(out, "x"),
                                    os.path.join(out, "validate.slrun"))
    check_equal("validate() imported synced", report["synced"], sim["synced"])
    assert "padding-duplicates" in lc.patterns(report), lc.patterns(report)
    s = lc.settings_of(files[0])
    check_equal("validate() settings", (s["stage"], s["sampler_epoch"], s["dataset_size"],
                                        s["shuffle"], s["epoch"]), ("validate", EPOCHS, 37,
                                                                     False, EPOCHS))
    print("validate(dataloaders=X) after fit: X's own DistributedSampler at epoch %d; flags, "
          "dataset_size and matrices from X" % EPOCHS)


def check_test(cli, out, evals):
    """trainer.test(dataloaders=X shuffled) after fit: limit_test_batches stays 1.0 (all);
    the sampler's epoch is the completed fit epochs, so the shuffle is seeded 0 + 2."""
    ranks = evals[("test", False, EPOCHS, 0, 0)]
    sim = lc.simulate(cli, os.path.join(out, "x"), B, "1.0", shuffle=True, epoch=EPOCHS)
    for r in range(W):
        check_equal("test(): sampler epoch", ranks[r]["samplers"][0]["epoch"], EPOCHS)
        check_equal("test() rank %d local" % r, ranks[r]["local"], sim["per_rank"][r])
        check_equal("test() compute()", ranks[r]["synced"], sim["synced"])
    files = lc.dump_files(out, stage="test", epoch=EPOCHS)
    lc.check_like(cli, os.path.join(out, "x"), files, ranks)
    report = lc.import_and_diagnose(cli, files, os.path.join(out, "x"),
                                    os.path.join(out, "test.slrun"))
    check_equal("test() imported per-rank", report["per_rank"], sim["per_rank"])
    check_equal("test() imported synced", report["synced"], sim["synced"])
    s = lc.settings_of(files[3])
    check_equal("test() settings", (s["stage"], s["limit_batches"], s["shuffle"],
                                    s["sampler_epoch"], s["dataset_size"]),
                ("test", "all", True, EPOCHS, 37))
    print("test(dataloaders=X) after fit: every batch, shuffled with epoch %d; dumps "
          "eval_test_epoch%d_rank<r>" % (EPOCHS, EPOCHS))


def main():
    cli = sys.argv[1]
    with lc.workdir() as out:
        for name, (n, mult) in (("val", (103, 7)), ("x", (37, 2))):
            lc.write_table(out, name, n, mult)
        log, results = lc.launch("variants", out)
        evals = lc.evaluations(results)
        check_equal("evaluations", sorted(evals), sorted(
            [("fit", False, e, v, 0) for e in range(EPOCHS) for v in (0, 1)]
            + [("validate", False, EPOCHS, 0, 0), ("test", False, EPOCHS, 0, 0)]))
        check_precision(log, results)
        check_unreadable(log, out)
        check_fit(cli, out, evals)
        check_validate_after_fit(cli, out, evals)
        check_test(cli, out, evals)
    print("PASS")


if __name__ == "__main__":
    main()
