"""What a Lightning Trainer tells about the evaluation running now, without being changed:
the loader of each dataloader_idx, the sampler its batches follow, and the settings_json of
its dump (the sampler, batch size, limits, sanity steps, epoch and step)."""
from . import _format, _samplers


def _limit_text(limit):
    """Lightning's limit as the user wrote it: 1.0 (a float) is every batch, 1 one batch."""
    if limit is None:
        return None
    if isinstance(limit, float):
        return "all" if limit == 1.0 else repr(limit)
    return str(limit)


def _count(value):
    """An int for settings_json; Lightning keeps -1 sanity steps as float('inf')."""
    if value is None:
        return None
    if isinstance(value, float) and value == float("inf"):
        return -1
    return int(value)


def evaluation_loader(trainer, stage, dataloader_idx):
    """The loader of the evaluation running now (stage "validate" or "test").
    trainer.val_dataloaders answers with the fit loop's loaders even inside
    trainer.validate(dataloaders=X), so the running loop's own loaders come first
    (Trainer._evaluation_loop, private in Lightning 2.x)."""
    loaders = None
    try:
        loop = trainer._evaluation_loop
        combined = getattr(loop, "_combined_loader", None)
        loaders = list(combined.flattened) if combined is not None else None
    except Exception:  # not Lightning 2.x, or outside its loop
        loaders = None
    if loaders is None:
        try:
            loaders = getattr(trainer, "test_dataloaders" if stage == "test"
                              else "val_dataloaders", None)
        except Exception:
            loaders = None
        if isinstance(loaders, dict):
            loaders = list(loaders.values())
        elif loaders is not None and not isinstance(loaders, (list, tuple)):
            loaders = [loaders]
    if loaders is None or not 0 <= dataloader_idx < len(loaders):
        return None
    return loaders[dataloader_idx]


def loader_sampler(loader):
    """The sampler whose order the loader's batches follow."""
    batch_sampler = getattr(loader, "batch_sampler", None)
    sampler = getattr(batch_sampler, "sampler", None)
    return sampler if sampler is not None else getattr(loader, "sampler", None)


def loader_settings(trainer, stage, rec, loader, sampler, dataloader_idx, user_sizes):
    """settings_json of the dump `rec` records from `loader` (its batches in `sampler`'s
    order); user_sizes: the (dataset_size, batch_size) the user set, kept over the loader's."""
    testing = stage == "test"
    batch_sampler = getattr(loader, "batch_sampler", None)
    batch_size = getattr(loader, "batch_size", None)
    if batch_size is None:
        batch_size = getattr(batch_sampler, "batch_size", None)
    source = "loader"
    if batch_size is None and user_sizes[1] is not None:
        batch_size, source = user_sizes[1], "given"
    dataset = getattr(loader, "dataset", None)
    dataset_size = user_sizes[0]
    if dataset_size is None and dataset is not None and hasattr(dataset, "__len__"):
        dataset_size = len(dataset)  # the user's dataset, also under the wrapper
    if dataset_size is None:
        dataset_size = _samplers.dataset_size(sampler)
    interval = getattr(trainer, "val_check_interval", None)
    return _format.new_settings(
        "lightning", **_samplers.sampler_settings(sampler),
        loader_drop_last=bool(getattr(loader, "drop_last",
                                      getattr(batch_sampler, "drop_last", False))),
        batch_size=batch_size, batch_size_source=source if batch_size is not None else None,
        limit_batches=_limit_text(getattr(trainer, "limit_test_batches" if testing
                                          else "limit_val_batches", None)),
        sanity_steps=_count(getattr(trainer, "num_sanity_val_steps", None)),
        sanity=bool(rec.sanity), stage="test" if testing else "validate",
        dataloader_idx=dataloader_idx, validation_in_epoch=rec.validation,
        val_check_interval=None if interval is None else str(interval),
        world_size=rec.world_size, rank=rec.rank, dataset_size=dataset_size,
        num_classes=rec.num_classes,
        epoch=int(getattr(trainer, "current_epoch", 0) or 0),
        global_step=int(getattr(trainer, "global_step", 0) or 0),
        versions=_format.versions())
