"""What the user logged, beside what the records prove: during one evaluation the module's
log() is wrapped (restored after, as MetricWatch does for metrics) and every value logged is
kept, by loader and batch; after the evaluation each rank says what its own records prove of
each value (the ranks' answers gathered), and rank 0 gives the true value over the distinct
samples of every rank wherever the records prove it:
  - a torchmetrics metric object that saw exactly what the records hold: a fresh copy of it
    (same arguments) fed every rank's records must give what Lightning logged, and fed the
    distinct samples gives the true value;
  - a tensor logged per batch that equals each batch's accuracy (correct / n of its records)
    on every rank: the accuracy of the distinct samples is the true value;
  - a tensor logged at the epoch's end that equals the rank's accuracy on every rank: the
    same.
Nothing recorded, and a value logged with sync_dist over a padded DistributedSampler: what is
known (the duplicates it counts) and how to let ShardLens check it is said once."""
import copy
import os
import warnings

from ._recorder import PADDING

# Lightning 2.x LightningModule.log's parameters, in order, after (name, value).
_LOG_PARAMS = ("prog_bar", "logger", "on_step", "on_epoch", "reduce_fx", "enable_graph",
               "sync_dist", "sync_dist_group", "add_dataloader_idx", "batch_size",
               "metric_attribute", "rank_zero_only")
_TOLERANCE = 1e-6  # float32 means and metric computes, against float64 over the records


def _close(a, b):
    return abs(a - b) <= _TOLERANCE * max(1.0, abs(a), abs(b))


class _Call:
    """One log() call: the key Lightning logs it under, what was logged, where and how."""

    def __init__(self, key, value, metric, sync, fx, loader, batch):
        self.key, self.value, self.metric, self.sync = key, value, metric, sync
        self.fx, self.loader, self.batch = fx, loader, batch


class LogWatch:
    """Wraps one LightningModule's log() for one evaluation. batches(loader): how many of that
    loader's batches have ended, so a call made in validation_step belongs to the next one."""

    def __init__(self, module, trainer, batches):
        self.calls = []
        self._module, self._trainer, self._batches = module, trainer, batches
        self._own = module.__dict__.get("log")  # an instance attribute the user set, if any
        original = module.log

        def log(name, value, *args, **kwargs):
            try:
                self._seen(name, value, args, kwargs)
            except Exception:  # never the user's error: that value is just not read
                pass
            return original(name, value, *args, **kwargs)
        module.log = log

    def detach(self):
        if self._own is not None:
            self._module.log = self._own
        else:
            self._module.__dict__.pop("log", None)

    def _seen(self, name, value, args, kwargs):
        opts = dict(zip(_LOG_PARAMS, args), **kwargs)
        fx = str(getattr(self._module, "_current_fx_name", None) or "")
        on_step, on_epoch = opts.get("on_step"), opts.get("on_epoch")
        if on_step is None and on_epoch is None:  # evaluation hooks log per epoch
            on_step, on_epoch = False, True
        if not on_epoch:
            return  # only the epoch's value is compared
        key = name + ("_epoch" if on_step else "")
        idx = getattr(getattr(self._trainer, "_results", None), "dataloader_idx", None)
        if idx is not None and opts.get("add_dataloader_idx", True):
            key += "/dataloader_idx_%d" % idx
        loader = int(idx or 0)
        metric = value if _is_metric(value) else None
        if metric is None:
            if hasattr(value, "detach"):
                if value.numel() != 1:
                    return
                value = value.detach().reshape(()).clone()  # stays on its device
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                value = float(value)
            else:
                return
        self.calls.append(_Call(key, None if metric is not None else value, metric,
                                bool(opts.get("sync_dist", False)), fx, loader,
                                self._batches(loader)))


def _is_metric(value):
    return any(k.__name__ == "Metric" and k.__module__.startswith("torchmetrics")
               for k in type(value).__mro__)


def same_inputs(a, b):
    """Whether two metrics' updates of a batch got the very same tensors (the same class ids
    and the same target memory): then one's records are the other's."""
    if len(a) != len(b):
        return False
    for (ta, ia), (tb, ib) in zip(a, b):
        if ia is not ib or ta.shape != tb.shape or ta.dtype != tb.dtype or \
                ta.device != tb.device or ta.data_ptr() != tb.data_ptr() or \
                ta.stride() != tb.stride():
            return False
    return True


# -- each rank: what its own records prove ----------------------------------------------------
def local_summary(calls, parts):
    """{key: summary} of this rank's calls: "metric" (a watched metric whose inputs are the
    records: its name), "batch" (every batch's value = its records' accuracy) or "epoch" (the
    epoch's value = the rank's accuracy), with match False where a value is not that; and
    sync (every call with sync_dist). parts: loader -> the callback's _Part."""
    import numpy as np
    by_key = {}
    for c in calls:
        by_key.setdefault(c.key, []).append(c)
    scalars = [c.value for c in calls if hasattr(c.value, "detach")]
    host = {}
    if scalars:  # one transfer for every value of the evaluation
        import torch
        device = scalars[0].device
        values = torch.stack([v.to(device=device, dtype=torch.float64) for v in scalars])
        host = dict(zip(map(id, scalars), values.cpu().tolist()))
    out = {}
    for key, cs in by_key.items():
        loaders = {c.loader for c in cs}
        d = cs[0].loader
        part = parts.get(d)
        s = {"loader": d, "sync": all(c.sync for c in cs), "match": False, "kind": None,
             "recorded": bool(part is not None and part.recorder is not None and
                              not part.failed and part.recorder.count)}
        out[key] = s
        if len(loaders) != 1 or not s["recorded"]:
            continue
        cols = part.recorder._columns()
        hit = cols["target"] == cols["prediction"]
        if all(c.metric is not None for c in cs):
            w = part.mirror(cs[0].metric) if len({id(c.metric) for c in cs}) == 1 else None
            s.update(kind="metric", match=w is not None, metric=w.name if w else None)
            continue
        if any(c.metric is not None for c in cs):
            continue
        values = [host.get(id(c.value), c.value) for c in cs]
        if all(c.fx.endswith("_step") for c in cs):
            s["kind"], s["match"] = "batch", True
            for c, v in zip(cs, values):
                if c.batch >= len(part.batches):
                    s["match"] = False
                    break
                start, end = part.batches[c.batch]
                if end <= start or not _close(v, float(np.mean(hit[start:end]))):
                    s["match"] = False
                    break
        elif all(c.fx.endswith("_epoch_end") for c in cs) and len(parts) == 1:
            s["kind"] = "epoch"
            s["match"] = len(hit) > 0 and _close(values[-1], float(np.mean(hit)))
    return out


def unrecorded_notes(calls, parts):
    """(key, message) for each value logged with sync_dist over a loader that recorded
    nothing and whose DistributedSampler pads: the duplicates the value counts."""
    notes = []
    for c in calls:
        part = parts.get(c.loader)
        if c.key in dict(notes) or not c.sync or part is None or (part.recorder is not None and not part.failed and
                                          part.recorder.count):
            continue
        s = part.sampler
        total, dataset = getattr(s, "total_size", None), getattr(s, "dataset", None)
        try:
            pad = int(total) - len(dataset) if total is not None and \
                not getattr(s, "drop_last", False) else 0
            # The padding is the last sample of the last ranks, evaluated only when a rank's
            # batches (every rank runs as many) reach its last sample: not under a batch limit.
            size = getattr(part.loader, "batch_size", None)
            reached = size is not None and len(part.batches) * int(size) >= int(s.num_samples)
        except (TypeError, AttributeError):
            pad = 0
        if pad > 0 and reached:
            notes.append((c.key, "%s is logged with sync_dist=True over dataloader %d's "
                          "DistributedSampler, which repeats %d sample%s (%d places for %d "
                          "samples, world size %s): the logged value counts %s. Nothing is "
                          "recorded to give its true value: return (preds, target) from the "
                          "step, or log a torchmetrics metric, and ShardLens compares them"
                          % (c.key, c.loader, pad, "s" if pad != 1 else "", total,
                             len(dataset), getattr(s, "num_replicas", "?"),
                             "them" if pad != 1 else "it")))
    return notes


# -- rank 0: the true values -------------------------------------------------------------------
def load_records(stem, world):
    """Every rank's (index, target, prediction, flags) of one evaluation, from its dumps;
    None when a rank wrote none (the verdict names it)."""
    import numpy as np
    out = []
    for r in range(world):
        path = "%s_rank%d" % (stem, r)
        if not (os.path.exists(path + ".npz") or os.path.exists(path + ".pt")):
            return None
        if os.path.exists(path + ".npz"):
            with np.load(path + ".npz") as d:
                out.append({k: d[k] for k in ("index", "target", "prediction", "flags")})
        else:
            import torch
            d = torch.load(path + ".pt", weights_only=True)
            out.append({k: d[k].numpy() for k in ("index", "target", "prediction", "flags")})
    return out


def _distinct(ranks):
    """target, prediction of each distinct dataset index, at its first record."""
    import numpy as np
    cat = {k: np.concatenate([r[k] for r in ranks]) for k in ("index", "target", "prediction")}
    _, first = np.unique(cat["index"], return_index=True)
    return cat["target"][first], cat["prediction"][first]


def _metric_value(watched, target, prediction):
    """A fresh copy of the watched metric (same arguments, unsynced, on the CPU) fed these
    records: its compute() as a float, or None when it is not one number."""
    import torch
    m = copy.deepcopy(watched.metric)
    m.reset()
    m = m.cpu()
    m.sync_on_compute = False
    m._to_sync = False
    m.dist_sync_on_step = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if len(target):
            m.update(torch.from_numpy(prediction), torch.from_numpy(target))
        value = m.compute()
    return float(value) if getattr(value, "numel", lambda: 0)() == 1 else None


def true_values(summaries, logged, records, metrics):
    """Rank 0: [{key, logged, true, samples, duplicates, padding, cause}] for each key whose
    records prove the true value. summaries: every rank's local_summary; logged: key -> the
    value Lightning logged (its callback_metrics); records: loader -> load_records();
    metrics: name -> the watched metric (MetricWatch's _Watched)."""
    import numpy as np
    found = []
    for key, s0 in summaries[0].items():
        ss = [s.get(key) for s in summaries]
        if any(s is None or not s["match"] or s["kind"] != s0["kind"] or
               s["loader"] != s0["loader"] or s.get("metric") != s0.get("metric")
               for s in ss) or key not in logged:
            continue
        ranks = records.get(s0["loader"])
        if not ranks:
            continue
        target, prediction = _distinct(ranks)
        every = {k: np.concatenate([r[k] for r in ranks]) for k in ("target", "prediction",
                                                                    "flags")}
        dup = len(every["target"]) - len(target)
        padding = int(np.count_nonzero(every["flags"] & PADDING))
        value = float(logged[key])
        model = None  # what Lightning logged, as the records give it
        if s0["kind"] == "metric":
            w = metrics.get(s0["metric"])
            if w is None:
                continue
            model = _metric_value(w, every["target"], every["prediction"])
            true = _metric_value(w, target, prediction)
            if true is None or model is None or not _close(model, value):
                continue  # the copy does not give what was logged: no claim
        else:
            true = float(np.mean(target == prediction)) if len(target) else None
            if true is None:
                continue
            own = ranks if s0["sync"] else ranks[:1]
            if s0["kind"] == "batch":
                hits = np.concatenate([r["target"] == r["prediction"] for r in own])
                model = float(np.mean(hits))
            else:
                model = float(np.mean([np.mean(r["target"] == r["prediction"]) for r in own]))
        cause = None
        if _close(model, value) and not _close(value, true):
            sizes = sorted({len(r["target"]) for r in ranks})
            parts = []
            if s0["kind"] == "epoch" and s0["sync"] and len(sizes) > 1:
                parts.append("the mean of the ranks' accuracies, with equal weights for %s "
                             "to %s samples" % (sizes[0], sizes[-1]))
            elif s0["kind"] != "metric" and not s0["sync"] and len(ranks) > 1:
                parts.append("rank 0's samples only (no sync_dist)")
            if dup and (s0["kind"] == "metric" or s0["sync"]):
                parts.append("%d %sduplicate%s counted" % (
                    dup, "padding " if padding == dup else "", "s" if dup != 1 else ""))
            cause = ", ".join(parts) or None
        found.append({"key": key, "logged": value, "true": true, "samples": len(target),
                      "duplicates": dup, "padding": padding, "cause": cause,
                      "kind": s0["kind"]})
    return found


def line(f):
    """The line printed where a logged value is not its true value."""
    return "ShardLens: %s logged %.6g, true %.6g over the %d distinct samples evaluated%s" % (
        f["key"], f["logged"], f["true"], f["samples"], ": " + f["cause"] if f["cause"] else "")


def differs(f):
    return not _close(f["logged"], f["true"])


def scalars(found):
    return {"shardlens/true_" + f["key"]: f["true"] for f in found}

