"""What a sampler tells without being disturbed: its kind, the dataset it covers, the settings
it ran with, the order it yields in the iteration under way (replayed, not drawn again), and
the padding Accelerate's BatchSamplerShard adds and the batch lengths it deals."""
from . import _format

PADDING = _format.FLAG_BITS["PADDING"]
PAD_ROW = _format.FLAG_BITS["PAD_ROW"]


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


def accelerate_batch_lengths(batch_sampler, world_size):
    """Every rank's batch lengths, step by step, under a prepared loader's BatchSamplerShard
    with even_batches=False (where they may differ), or None where every batch of a step is as
    long on every rank (even_batches, one process) or the batch sampler is not Accelerate's.

    Dealt again by Accelerate's own class over the positions of the loader's list, so nothing
    is drawn from the loader's sampler (the lengths do not depend on its order)."""
    if world_size < 2 or kind_name(batch_sampler) != "BatchSamplerShard" or \
            getattr(batch_sampler, "even_batches", True):
        return None
    try:
        from accelerate.data_loader import BatchSamplerShard
        from torch.utils.data import BatchSampler
        inner = batch_sampler.batch_sampler
        positions = range(len(inner.sampler))
        return [[len(batch) for batch in BatchSamplerShard(
            BatchSampler(positions, inner.batch_size, inner.drop_last),
            num_processes=world_size, process_index=rank,
            split_batches=batch_sampler.split_batches, even_batches=False)]
            for rank in range(world_size)]
    except Exception:  # a batch sampler of another shape: lengths unknown, nothing flagged
        return None


def unequal_steps(lengths):
    """Whether some step's batches differ in length across the ranks (a step a rank does not
    run counts as length 0): a plain all_gather of them fails or hangs, so a run that got
    through gathered padded tensors (pad_across_processes) or objects."""
    if not lengths:
        return False
    steps = max(len(rank) for rank in lengths)
    return any(len({rank[k] if k < len(rank) else 0 for rank in lengths}) > 1
               for k in range(steps))
