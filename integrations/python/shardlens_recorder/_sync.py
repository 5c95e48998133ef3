"""settings_json's `sync`: how the reported matrix was synchronized across the ranks, named as
`shardlens-cli simulate --sync` names it, so that `simulate --like RUN` reproduces it."""

# What simulate --sync accepts (core/torchsem/sync.cpp's to_string of each SyncStrategy).
SYNCS = ("all-reduce", "local", "double", "gather-zero-pad", "gather-trim",
         "gather-for-metrics", "normalize-then-sum", "gather")


def check_sync(sync):
    """None, or one of SYNCS (a ValueError naming them otherwise)."""
    if sync is not None and sync not in SYNCS:
        raise ValueError("sync must be one of %s (as shardlens-cli simulate --sync names "
                         "them), got %r" % (", ".join(SYNCS), sync))
    return sync


def metric_sync(metric):
    """The sync of a torchmetrics metric's compute(): "all-reduce" when every state is
    reduced by sum over the default process group (what torchmetrics' all_gather and local
    sum amount to), "local" when compute() does not sync (sync_on_compute=False: each rank's
    own state), else None (a custom dist_sync_fn or process group, a reduction other than a
    sum: not one ShardLens can name)."""
    if not getattr(metric, "sync_on_compute", True):
        return "local"
    if getattr(metric, "dist_sync_fn", None) is not None or \
            getattr(metric, "process_group", None) is not None:
        return None
    reductions = getattr(metric, "_reductions", None)
    if not reductions:
        return None
    for fx in reductions.values():
        if getattr(fx, "__name__", None) != "dim_zero_sum":
            return None
    return "all-reduce"
