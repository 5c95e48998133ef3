"""Record what every rank of a distributed evaluation actually evaluated, for ShardLens.

Add a recorder to your own torch.distributed (or PyTorch Lightning) evaluation; each rank
writes one dump per epoch with the dataset index, target and prediction of every sample it
evaluated (plus, optionally, its local confusion matrix and the reported one). Then:

    shardlens-cli import dumps/eval_epoch*_rank*.npz --dataset fashion-mnist:test --out run.slrun
    shardlens-cli diagnose --run run.slrun

Install it with `pip install --no-build-isolation integrations/python` (or
/usr/share/shardlens/python from the .deb), or copy this package's directory next to your
script.

Plain torch.distributed::

    from shardlens_recorder import ShardLensRecorder, IndexedDataset
    data = IndexedDataset(test_set)
    loader = DataLoader(data, batch_size=64, sampler=DistributedSampler(data, shuffle=True))
    rec = ShardLensRecorder("dumps", num_classes=10, loader=loader, sync="all-reduce")
    for epoch in range(epochs):
        loader.sampler.set_epoch(epoch)         # the recorder reads sampler.epoch
        rec.reset()                             # a new epoch: records and matrices cleared
        for index, x, y in loader:
            rec.update(index, y, model(x))      # logits are reduced by argmax
        rec.set_reported(synced_confmat)        # optional: what your metric reported
        rec.save()                              # dumps/eval_epoch<e>_rank<r>.npz

Lightning (the callback works without Lightning installed: its base is then a plain class)::

    trainer = Trainer(callbacks=[ShardLensCallback("runs/")])   # the LightningModule unchanged
    # The module's torchmetrics classification metrics are watched (their update() inputs and
    # the confusion matrix's synced compute()); indices are replayed from the sampler Lightning
    # injected; rank 0 imports, diagnoses, prints and logs the verdict of every validation.
    # Without such metrics: validation_step returns its logits (targets: the batch's last
    # element), or (logits, y), or a dict: see ShardLensCallback.

Accelerate::

    accelerator.gather_for_metrics = watch(accelerator, "runs/")   # see watch()

Hugging Face Accelerate (and the HF Trainer's evaluation loop): record each rank's own batch
before it is gathered, flag Accelerate's cycled even_batches padding, and keep the matrix
your metric reported from the gathered predictions::

    data = IndexedDataset(test_set)
    loader = accelerator.prepare(DataLoader(data, batch_size=64))
    rec = ShardLensRecorder("dumps", num_classes=10, rank=accelerator.process_index,
                            world_size=accelerator.num_processes, dataset_size=len(data),
                            batch_size=64)
    for step, (index, x, y) in enumerate(loader):
        logits = model(x)
        rec.update(index, y, logits, flags=accelerate_padding_flags(
            step, accelerator.process_index, accelerator.num_processes, 64, len(data), len(y)))
        preds, refs = accelerator.gather_for_metrics((logits.argmax(-1), y))
        metric.add_batch(predictions=preds, references=refs)
    rec.save()
    # shardlens-cli import dumps/eval_epoch0_rank*.npz --out run.slrun, then diagnose --run,
    # and simulate the same loader with --sampler accelerate to compare.

The epoch of a dump is, in this order: an explicit `epoch` (ShardLensRecorder(epoch=...),
reset(epoch=...), save(epoch=...) or the `epoch` attribute), else the sampler's `epoch`
attribute (what DistributedSampler.set_epoch sets), else 0. Dumps are named
{name}_epoch{e}_rank{r}.npz/.pt; a dump recorded during Lightning's sanity check is named
{name}_sanity_epoch{e}_rank{r}, every record flagged SANITY, and the callback's test stage
writes {name}_test_epoch{e}_rank{r}, so neither matches the glob {name}_epoch*. The callback
adds _val{v} (the v-th validation of an epoch) and _dl{d} (the loader) before _rank when not 0.

Dump format (what `shardlens-cli import` reads): an .npz and/or a .pt (torch.save of a dict
of tensors), every array and settings_json key listed in dump_format.json beside this file
(docs/FORMATS.md in the repository), FORMAT_VERSION its version. Files are written atomically
(temporary file + rename). Only numpy (for .npz) and torch (for .pt, tensors) are needed, and
only when used.

Values are read as the frameworks read them: a float dataset index is refused, as torch
refuses it as an index, and so is a float target that holds a value no class id has (0.7,
NaN), which torchmetrics' binary metrics refuse and its multiclass ones truncate to another
class: ShardLensInputError, naming the batch and the value, at the first batch (a later
batch's is found when the dump is written, which it then is not).
"""

__version__ = "0.1.0"  # = CMakeLists.txt project VERSION; pyproject.toml reads it

# The package by concern: the dump format (_format: dump_format.json), the writer
# (_writer), reading a batch's tensors (_tensors), samplers (_samplers), the recorder
# (_recorder), what the front ends share: saying once, labels, the verdict (_recording, with
# the verdict through shardlens-cli in _verdict), torchmetrics (_metrics), and the front
# ends: Lightning (_callback: not named *lightning*, whose warnings Lightning prints without
# their category), Accelerate (_accelerate) and the Hugging Face Trainer (_hf_trainer).
__all__ = ["ShardLensRecorder", "IndexedDataset", "PADDING", "SANITY", "ShardLensCallback",
           "LIGHTNING", "accelerate_padding_flags", "ShardLensWarning", "ShardLensVerdictError",
           "ShardLensInputError", "watch", "SETTINGS_KEYS", "FORMAT_VERSION",
           "ShardLensTrainerCallback"]

from ._format import FORMAT_VERSION, SETTINGS_KEYS
from ._tensors import ShardLensInputError
from ._samplers import accelerate_padding_flags
from ._recorder import PADDING, SANITY, IndexedDataset, ShardLensRecorder, ShardLensWarning
from ._recording import ShardLensVerdictError
from ._accelerate import watch
from ._callback import LIGHTNING, ShardLensCallback
from ._hf_trainer import ShardLensTrainerCallback
