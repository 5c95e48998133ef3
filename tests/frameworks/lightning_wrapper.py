"""Lightning 2.6 oracle: DistributedSamplerWrapper over a WeightedRandomSampler, with and
without seed_everything, against simulate and the callback's dumps.

Usage: lightning_wrapper.py SHARDLENS_CLI. Two real Trainers (lightning_worker.py
wrapper_seeded / wrapper_unseeded): 4 CPU ranks, a validation loader over 103 samples whose
sampler is WeightedRandomSampler(weights, 61, replacement=True) without a generator, so it
draws from the global RNG; Lightning wraps it in DistributedSamplerWrapper (each rank lists
the inner sampler itself and takes positions r::4, padded to 64). validation_step returns a
tuple (logits, target); the callback replays the wrapper's positions over the list the inner
sampler drew, so no index is returned.

The worker observes every list the inner sampler drew on each rank (WeightedRandomSampler's
__iter__ wrapped, its class unchanged). Asserted: with seed_everything(7) every rank drew the
same list at each validation; without it the ranks' lists differ (shards overlap). Each
rank's local state equals simulate --sampler lightning-wrapper --inner-sampler recorded over
that rank's list, compute() equals the sum, and the imported dumps equal both, with
dataset_size = len(dataset) (103), not len(inner sampler) (61). diagnose names
sampler-with-replacement for the seeded run and wrapper-overlap for the unseeded one
(check_patterns).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frameworks  # noqa: E402

frameworks.require_venv()

import numpy as np  # noqa: E402

import lightning_common as lc  # noqa: E402
from lightning_common import W, check_equal  # noqa: E402

B, LIMIT, EPOCHS, N, DRAWN = 2, 10, 2, 103, 61


def rank_sim(cli, out, drawn, tag):
    path = os.path.join(out, "drawn_%s.npy" % tag)
    np.save(path, np.array(drawn, dtype=np.int64))
    return lc.simulate(cli, os.path.join(out, "val"), B, LIMIT, extra=[
        "--sampler", "lightning-wrapper", "--inner-sampler", "recorded",
        "--inner-indices", "npy:" + path])


def check_run(cli, config, seeded):
    with lc.workdir() as out:
        if os.environ.get("SHARDLENS_LIGHTNING_OUT"):
            out = os.path.join(out, config)
            os.makedirs(out, exist_ok=True)
        lc.write_table(out, "val", N, 7)
        log, results = lc.launch(config, out)
        evals = lc.evaluations(results)
        check_equal("evaluations", sorted(evals),
                    [("fit", False, e, 0, 0) for e in range(EPOCHS)])
        for epoch in range(EPOCHS):
            ranks = evals[("fit", False, epoch, 0, 0)]
            lists = [ranks[r]["draws"] for r in range(W)]
            for r in range(W):
                check_equal("sampler", ranks[r]["samplers"][0]["type"],
                            "DistributedSamplerWrapper")
                check_equal("one draw per validation", ranks[r]["n_draws"], epoch + 1)
                assert len(lists[r]) == DRAWN
            same = all(x == lists[0] for x in lists)
            assert same == seeded, "ranks drew %s lists (seeded=%s)" % (
                "the same" if same else "different", seeded)
            synced = None
            for r in range(W):
                s = rank_sim(cli, out, lists[r], "e%d_r%d" % (epoch, r))
                check_equal("rank %d local, epoch %d" % (r, epoch), ranks[r]["local"],
                            s["per_rank"][r])
                m = np.array(s["per_rank"][r])
                synced = m if synced is None else synced + m
                if seeded:
                    check_equal("compute()", ranks[r]["synced"], s["synced"])
            for r in range(W):
                check_equal("compute() = sum of the ranks", ranks[r]["synced"], synced.tolist())
            files = lc.dump_files(out, epoch=epoch)
            for r, f in enumerate(files):
                with np.load(f) as d:
                    check_equal("dump indices", d["index"].tolist(), ranks[r]["indices"])
                    check_equal("dump dataset_size", int(d["dataset_size"]), N)
                    # 61 positions padded to 64: position 60 + r + 1 >= 61 is padding.
                    check_equal("dump padding flags", [bool(x & 1) for x in d["flags"].tolist()],
                                [False] * 15 + [r >= 1])
            report = lc.import_and_diagnose(cli, files, os.path.join(out, "val"),
                                            os.path.join(out, "e%d.slrun" % epoch))
            check_equal("imported per-rank", report["per_rank"],
                        [ranks[r]["local"] for r in range(W)])
            check_equal("imported synced", report["synced"], synced.tolist())
            st = lc.settings_of(files[0])
            expect = {"sampler": "wrapper", "inner_sampler": "weighted_random", "shuffle": False,
                      "seed": 7 if seeded else 0, "sampler_epoch": epoch, "dataset_size": N}
            check_equal("settings", {k: st[k] for k in expect}, expect)
            print("%s epoch %d: ranks drew %s lists; diagnosis: %s" % (
                config, epoch, "the same" if same else "different", ", ".join(lc.patterns(report))))
            check_patterns(report, seeded)


def check_patterns(report, seeded):
    """The patterns diagnose names from the dumps and their settings_json alone. Both runs pad
    61 positions to 64 (padding-duplicates, true). Seeded, every rank took its positions of one
    list: the repeats and gaps are WeightedRandomSampler's draws with replacement
    (sampler-with-replacement), which the padding shows (it repeats the head of the list other
    ranks evaluated); unseeded, each rank drew its own list (wrapper-overlap). No record is
    flagged SANITY, so no sanity-leak; rank-overlap is the generic name the wrapper refines."""
    want = ["padding-duplicates", "sampler-with-replacement" if seeded else "wrapper-overlap"]
    check_equal("diagnosis patterns (seeded=%s)" % seeded, lc.patterns(report), want)
    words = {d["pattern"]: d["explanation"] for d in report["diagnosis"]}
    if seeded:
        assert "one list of 61 draws (each of the 3 padding records repeats" in \
            words["sampler-with-replacement"], words
    else:
        assert "the ranks listed different draws" in words["wrapper-overlap"], words
    for pattern in want[1:]:
        print("  %s: %s" % (pattern, words[pattern]))


def main():
    cli = sys.argv[1]
    check_run(cli, "wrapper_seeded", seeded=True)
    check_run(cli, "wrapper_unseeded", seeded=False)
    print("PASS")


if __name__ == "__main__":
    main()
