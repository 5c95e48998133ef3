import lightning.pytorch as L
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
from torchmetrics.classification import MulticlassAccuracy, MulticlassConfusionMatrix

from shardlens_recorder import ShardLensCallback


class Model(L.LightningModule):  # nothing in here knows about ShardLens
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Linear(16, 10)
        self.confmat = MulticlassConfusionMatrix(num_classes=10)
        self.acc = MulticlassAccuracy(num_classes=10)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.cross_entropy(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self.net(x)
        self.confmat.update(logits, y)
        self.acc.update(logits, y)
        self.log("val_acc", self.acc)

    def on_validation_epoch_end(self):
        self.confmat.compute()  # all_gather of every rank's state, summed
        self.confmat.reset()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    g = torch.Generator().manual_seed(0)
    data = TensorDataset(torch.randn(1000, 16, generator=g),
                         torch.randint(0, 10, (1000,), generator=g))
    trainer = L.Trainer(accelerator="cpu", devices=4, max_epochs=2, limit_val_batches=2,
                        callbacks=[ShardLensCallback("runs/")])  # the one line
    trainer.fit(Model(), DataLoader(data, batch_size=64), DataLoader(data, batch_size=64))
