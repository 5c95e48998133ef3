"""Float dataset indices and float targets that are not class ids are refused, as the
frameworks refuse them, at the first batch: a real Lightning Trainer's fit stops in its sanity
check and Accelerate's watch at its first gather, before any work is lost, with the batch and
the value named. What the frameworks do is asserted first, on the same tensors: torch refuses
a float tensor as an index; torchmetrics' binary confusion matrix refuses a target of 0.7, and
its multiclass one counts 2.7 as class 2 (the truncation the recorder would have recorded).
Float targets that hold class ids (a binary y.float()) are recorded as torchmetrics reads them.
"""
import os

import pytest

torch = pytest.importorskip("torch")
np = pytest.importorskip("numpy")

from shardlens_recorder import ShardLensInputError, ShardLensRecorder  # noqa: E402

C = 3


def recorder(tmp_path):
    return ShardLensRecorder(str(tmp_path), num_classes=C, rank=0, world_size=1)


def test_the_frameworks_refuse_or_truncate_these_values():
    with pytest.raises(IndexError, match="tensors used as indices must be long"):
        torch.arange(5)[torch.arange(2) + 0.9]
    tm = pytest.importorskip("torchmetrics.classification")
    with pytest.raises(RuntimeError, match="Detected the following values in `target`"):
        tm.BinaryConfusionMatrix().update(torch.rand(4), torch.tensor([0, 1, 0, 1]) + 0.7)
    m = tm.MulticlassConfusionMatrix(C)
    m.update(torch.tensor([0, 1, 2]), torch.tensor([0, 1, 2]).float() + 0.7)
    assert m.compute().tolist() == [[1, 0, 0], [0, 1, 0], [0, 0, 1]]  # 2.7 counted as 2


@pytest.mark.parametrize("form", ["tensor", "ndarray", "list"])
def test_a_float_index_is_refused_naming_batch_and_value(tmp_path, form):
    index = {"tensor": torch.arange(4) + 0.9, "ndarray": np.arange(4) + 0.9,
             "list": [0.9, 1.9, 2.9, 3.9]}[form]
    rec = recorder(tmp_path)
    rec.update([10, 11, 12, 13], [0, 1, 2, 0], [0, 1, 2, 0])
    with pytest.raises(ShardLensInputError, match=r"dataset index of batch 1 is a float .*0\.9"):
        rec.update(index, [0, 1, 2, 0], [0, 1, 2, 0])


def test_a_float_target_not_a_class_id_is_refused_at_the_first_batch(tmp_path):
    rec = recorder(tmp_path)
    y = torch.tensor([0, 1, 2, 1])
    with pytest.raises(ShardLensInputError, match=r"target of batch 0 holds 0\.7"):
        rec.update(torch.arange(4), y.float() + 0.7, torch.randn(4, C))
    with pytest.raises(ShardLensInputError, match=r"target of batch 0 holds nan"):
        recorder(tmp_path).update([0], np.array([float("nan")]), [0])


def test_a_later_batch_is_refused_when_the_dump_is_written(tmp_path):
    rec = recorder(tmp_path)
    rec.update(torch.arange(2), torch.tensor([0.0, 1.0]), torch.tensor([0, 1]))
    rec.update(torch.arange(2, 4), torch.tensor([2.0, 1.5]), torch.tensor([2, 1]))
    with pytest.raises(ShardLensInputError, match=r"target of batch 1 holds 1\.5"):
        rec.save()
    assert os.listdir(str(tmp_path)) == []  # no dump that would read as exact


def test_float_targets_holding_class_ids_are_read_as_torchmetrics_reads_them(tmp_path):
    tm = pytest.importorskip("torchmetrics.classification")
    preds, y = torch.tensor([0.2, 0.9, 0.7, 0.1]), torch.tensor([0.0, 1.0, 0.0, 1.0])
    m = tm.BinaryConfusionMatrix()
    m.update(preds, y)
    rec = ShardLensRecorder(str(tmp_path), num_classes=2, rank=0, world_size=1)
    rec.update(torch.arange(4), y, preds)
    assert rec.local_matrix() == m.compute().tolist()


class _Lightning:
    """A LightningModule whose validation_step feeds a confusion matrix `bad` targets, and
    counts the training steps that ran."""

    @staticmethod
    def module(bad):
        L = pytest.importorskip("lightning.pytorch")
        from torchmetrics.classification import MulticlassConfusionMatrix

        class Module(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(C, C)
                self.confmat = MulticlassConfusionMatrix(C)
                self.trained = 0

            def training_step(self, batch, batch_idx):
                self.trained += 1
                x, y = batch
                return torch.nn.functional.cross_entropy(self.lin(x), y)

            def validation_step(self, batch, batch_idx):
                x, y = batch
                self.confmat.update(self.lin(x), bad(y))

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.1)

        return L, Module()


def loader():
    g = torch.Generator().manual_seed(0)
    data = torch.utils.data.TensorDataset(torch.randn(16, C, generator=g),
                                          torch.arange(16) % C)
    return torch.utils.data.DataLoader(data, batch_size=4)


def test_lightning_fit_stops_in_the_sanity_check(tmp_path):
    from shardlens_recorder import ShardLensCallback
    L, module = _Lightning.module(lambda y: y.float() + 0.7)
    trainer = L.Trainer(accelerator="cpu", devices=1, max_epochs=1, num_sanity_val_steps=2,
                        limit_train_batches=2, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False,
                        default_root_dir=str(tmp_path),
                        callbacks=[ShardLensCallback(str(tmp_path / "runs"), verdict=False)])
    with pytest.raises(ShardLensInputError, match=r"target of batch 0 holds 0\.7.*dataloader 0"):
        trainer.fit(module, loader(), loader())
    assert module.trained == 0  # no epoch of training spent first
    assert not os.path.exists(str(tmp_path / "runs")) or not os.listdir(str(tmp_path / "runs"))


def test_accelerate_watch_stops_at_the_first_gather(tmp_path):
    accelerate = pytest.importorskip("accelerate")
    import shardlens_recorder
    accelerator = accelerate.Accelerator(cpu=True)
    prepared = accelerator.prepare(loader())
    accelerator.gather_for_metrics = shardlens_recorder.watch(accelerator, str(tmp_path),
                                                              verdict=False)
    gathered = 0
    with pytest.raises(ShardLensInputError, match=r"dataset index of batch 0 is a float"):
        for step, (x, y) in enumerate(prepared):
            index = torch.arange(step * 4, step * 4 + len(y)) + 0.9
            accelerator.gather_for_metrics((index, x, y))
            gathered += 1
    assert gathered == 0
    accelerator.gather_for_metrics = shardlens_recorder.watch(accelerator, str(tmp_path),
                                                              verdict=False)
    with pytest.raises(ShardLensInputError, match=r"target of batch 0 holds 0\.7"):
        for step, (x, y) in enumerate(prepared):
            index = torch.arange(step * 4, step * 4 + len(y))
            accelerator.gather_for_metrics((index, x, y.float() + 0.7))
