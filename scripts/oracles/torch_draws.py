"""What real torch draws, written once for every oracle that draws it: a seeded randperm,
every rank's DistributedSampler after set_epoch, and a Dataset over a plain list.

The reference-vector makers beside this file, tests/oracle and tests/frameworks import it
(the tests put this folder on sys.path). torch is imported where it is used, so a script that
runs its parts without torch (modern_oracles.py skips them, saying so) can import it too.
"""


def randperm(seed, n):
    """torch.randperm(n) drawn from a torch.Generator seeded with `seed`, as a list."""
    import torch
    g = torch.Generator()
    g.manual_seed(seed)
    return torch.randperm(n, generator=g).tolist()


def distributed_samplers(n, world_size, shuffle, seed, epoch, drop_last):
    """The world_size DistributedSampler objects over range(n) of one case, after
    set_epoch(epoch): iterate one for its rank's indices."""
    from torch.utils.data.distributed import DistributedSampler
    ranks = []
    for rank in range(world_size):
        s = DistributedSampler(range(n), num_replicas=world_size, rank=rank, shuffle=shuffle,
                               seed=seed, drop_last=drop_last)
        s.set_epoch(epoch)
        ranks.append(s)
    return ranks


def distributed_shards(n, world_size, shuffle, seed, epoch, drop_last):
    """Every rank's indices from DistributedSampler (distributed_samplers, iterated)."""
    return [list(s) for s in distributed_samplers(n, world_size, shuffle, seed, epoch, drop_last)]


def list_dataset(items):
    """A torch Dataset over a plain list: what a sampler wrapped by Lightning's
    DistributedSamplerWrapper yielded, for a DistributedSampler to shard by position."""
    import torch.utils.data

    class ListDataset(torch.utils.data.Dataset):
        def __init__(self, items):
            self.items = items

        def __len__(self):
            return len(self.items)

        def __getitem__(self, i):
            return self.items[i]

    return ListDataset(items)
