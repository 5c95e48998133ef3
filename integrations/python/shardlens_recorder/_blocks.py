"""Where the recorder keeps an epoch's tensors until save(): a few large int64 blocks on
the tensors' own device, each batch copied in as it comes.

Why not keep each batch's tensors: an evaluation loop allocates large temporaries per batch
(a 1000-class confusion-matrix bincount is 8 MB). Small allocations that outlive their batch
(the recorder's references to each batch's index, target and class ids) sit between those
temporaries in the C heap, so the allocator keeps returning and faulting in fresh pages for
them: in bench/recorder_bench.py at 1000 classes that made the loop itself 1.5 to 15 times
slower at random, though the recorder's own calls took under 1 us a sample. With the batches
copied into blocks, nothing small outlives its batch. The copies are device operations: no
host synchronisation.
"""

ROWS = 4  # index, target, prediction, flags
FIRST_BLOCK = 1 << 16  # records; later blocks double, so an epoch needs a few


class Blocks:
    """Rows of int64 records, appended batch by batch, read back in one transfer per
    device."""

    def __init__(self):
        self._blocks = []  # [tensor [ROWS, capacity], used]
        self._open = {}  # device -> index into _blocks of its block being filled

    def append(self, columns):
        """columns: ROWS - 1 or ROWS flat tensors of one length on one device (flags last,
        optional). Returns where they went: (block, start)."""
        import torch
        n = columns[0].shape[0]
        device = columns[0].device
        k = self._open.get(device)
        if k is None or self._blocks[k][1] + n > self._blocks[k][0].shape[1]:
            grown = 2 * self._blocks[k][0].shape[1] if k is not None else FIRST_BLOCK
            self._blocks.append([torch.empty((ROWS, max(grown, n)), dtype=torch.int64,
                                             device=device), 0])
            k = self._open[device] = len(self._blocks) - 1
        block, start = self._blocks[k]
        for row, values in enumerate(columns):
            block[row, start:start + n].copy_(values)
        self._blocks[k][1] = start + n
        return k, start

    def to_host(self):
        """{block: ndarray [ROWS, used]}: each device's blocks concatenated on the device and
        copied to the host at once."""
        import torch
        by_device = {}
        for k, (block, used) in enumerate(self._blocks):
            by_device.setdefault(block.device, []).append((k, block[:, :used]))
        host = {}
        for parts in by_device.values():
            flat = torch.cat([p for _, p in parts], dim=1).cpu().numpy()
            at = 0
            for k, p in parts:
                host[k] = flat[:, at:at + p.shape[1]]
                at += p.shape[1]
        return host
