"""What a sampler tells without being disturbed: its kind, the dataset it covers, the settings
it ran with, the order it yields in the iteration under way (replayed, not drawn again), and
the padding Accelerate's BatchSamplerShard adds."""
from . import _format

PADDING = _format.FLAG_BITS["PADDING"]


def kind_name(sampler):
    """The sampler's class name, so no framework has to be imported to tell them apart."""
    return type(sampler).__name__


def is_wrapper(sampler):
    """Lightning's DistributedSamplerWrapper: a DistributedSampler over the positions of the
    list its inner sampler yields (kept in sampler.dataset._sampler_list)."""
    return kind_name(sampler) == "DistributedSamplerWrapper" and hasattr(sampler, "dataset")


def is_distributed(sampler):
    return hasattr(sampler, "num_replicas") and hasattr(sampler, "rank") and \
        hasattr(sampler, "dataset")


def dataset_size(sampler):
    """len(dataset) when the sampler knows the dataset itself (not a wrapper's inner list)."""
    if sampler is None or is_wrapper(sampler):
        return None
    for attr in ("dataset", "data_source"):
        data = getattr(sampler, attr, None)
        if data is not None and hasattr(data, "__len__"):
            return len(data)
    return None


def inner_kind(sampler):
    name = kind_name(sampler)
    if name == "SequentialSampler":
        return "sequential"
    if name == "WeightedRandomSampler":
        return "weighted_random"
    return "other"


def sampler_settings(sampler):
    """The settings_json entries a sampler tells: kind, shuffle, seed, epoch, drop_last."""
    name = kind_name(sampler)
    out = {"sampler": "other", "inner_sampler": None, "shuffle": None, "seed": None,
           "sampler_epoch": 0, "sampler_drop_last": False}
    if sampler is None:  # not known (no loader found, or a recorder given none)
        out.update(sampler=None, sampler_epoch=None, sampler_drop_last=None)
        return out
    if name in ("SequentialSampler", "RandomSampler"):
        out["sampler"] = "none"  # no distributed sampler: every rank reads everything
        out["shuffle"] = name == "RandomSampler"
        return out
    if is_wrapper(sampler):
        out["sampler"] = "wrapper"
        out["inner_sampler"] = inner_kind(getattr(sampler.dataset, "_sampler", None))
    elif name == "DistributedSampler":
        out["sampler"] = "distributed"
    elif name == "UnrepeatedDistributedSampler":
        out["sampler"] = "unrepeated"
    if is_distributed(sampler):
        out.update(shuffle=bool(getattr(sampler, "shuffle", False)),
                   seed=int(getattr(sampler, "seed", 0)),
                   sampler_epoch=int(getattr(sampler, "epoch", 0)),
                   sampler_drop_last=bool(getattr(sampler, "drop_last", False)))
    return out


def replay_order(sampler):
    """The dataset indices this rank's sampler yields in the iteration under way, without
    drawing anything again. (Replayed, not watched: Lightning makes a loader's iterator in the
    loop's reset(), before any callback hook, and fetches an unsized loader's first batch
    there; watching would mean swapping samplers inside Lightning's loaders, in time for
    some of them only.)"""
    # How: a DistributedSampler's order is a function of (seed, epoch, len) (its own
    # generator); a wrapper's positions map through the list its inner sampler drew when this
    # iteration started (re-iterating it would draw a new one). None when the sampler's
    # order cannot be known without disturbing it.
    name = kind_name(sampler)
    if name == "SequentialSampler":
        return list(range(len(sampler)))
    if not is_distributed(sampler):
        return None
    try:
        from torch.utils.data import DistributedSampler
    except ImportError:
        return None
    if not isinstance(sampler, DistributedSampler):
        return None
    if is_wrapper(sampler):
        drawn = getattr(sampler.dataset, "_sampler_list", None)
        if drawn is None:
            return None
        return [drawn[p] for p in DistributedSampler.__iter__(sampler)]
    if name != "DistributedSampler":  # a subclass may order differently
        return None
    return list(DistributedSampler.__iter__(sampler))


def accelerate_padding_flags(step, rank, world_size, batch_size, dataset_size, length,
                             split_batches=False):
    """PADDING flags of one rank's batch under Accelerate's BatchSamplerShard.

    Accelerate deals the loader's batches round-robin (batch step * W + rank goes to `rank`;
    with split_batches every batch of `batch_size` is split into W slices) and, with
    even_batches, completes the last round by cycling samples from the start of the order.
    A position of that stream at or past len(dataset) is such a cycled copy.
    """
    if split_batches:
        start = step * batch_size + rank * (batch_size // world_size)
    else:
        start = (step * world_size + rank) * batch_size
    return [PADDING if start + k >= dataset_size else 0 for k in range(length)]
