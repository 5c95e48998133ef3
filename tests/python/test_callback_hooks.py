"""ShardLensCallback driven the way Lightning 2.x drives callbacks, without Lightning.

Run by pytest (tests/python, with --cli SHARDLENS_CLI), once with Lightning installed and once
in a process that hides it (the callback's base is then a plain class). Lightning is not
needed: a stand-in Trainer calls the hooks in
Lightning 2.x's order for fit (sanity check, then per epoch: training, validation inside
the epoch, on_train_epoch_end) followed by test, with the real DistributedSampler of each
of 2 ranks, limit_val_batches=2 and num_sanity_val_steps=2. Checks: one dump per rank and
validation epoch (epoch = trainer.current_epoch), none overwritten; the sanity check kept
as eval_sanity_epoch0_rank{r} with flags & SANITY on every record and `sanity` = 1; the
test stage as eval_test_epoch{max_epochs}_rank{r}; the reported matrix the LightningModule
set in its own on_validation_epoch_end (which Lightning calls after the callbacks') is in
the dump. The callback's hook signatures are checked against Lightning 2.x's Callback (the
real one when Lightning is installed). One epoch's dumps are imported with shardlens-cli.
"""
import inspect
import json
import os
import subprocess
import sys
import tempfile

import pytest

np = pytest.importorskip("numpy")
torch = pytest.importorskip("torch")

import shardlens_recorder  # noqa: E402
from shardlens_recorder import SANITY, IndexedDataset, ShardLensCallback, ShardLensRecorder  # noqa: E402
from shardlens_recorder._callback import _CallbackBase  # noqa: E402

N, N_TEST, C, W, B = 30, 11, 4, 2, 3
MAX_EPOCHS, LIMIT_VAL, SANITY_STEPS = 3, 2, 2

# lightning.pytorch.Callback (2.x): the hooks ShardLensCallback may define, with their
# parameters (besides self).
LIGHTNING2_HOOKS = {
    "on_validation_epoch_start": ["trainer", "pl_module"],
    "on_validation_epoch_end": ["trainer", "pl_module"],
    "on_validation_start": ["trainer", "pl_module"],
    "on_validation_end": ["trainer", "pl_module"],
    "on_validation_batch_start": ["trainer", "pl_module", "batch", "batch_idx",
                                  "dataloader_idx=0"],
    "on_validation_batch_end": ["trainer", "pl_module", "outputs", "batch", "batch_idx",
                                "dataloader_idx=0"],
    "on_test_epoch_start": ["trainer", "pl_module"],
    "on_test_epoch_end": ["trainer", "pl_module"],
    "on_test_start": ["trainer", "pl_module"],
    "on_test_end": ["trainer", "pl_module"],
    "on_exception": ["trainer", "pl_module", "exception"],
    "on_test_batch_start": ["trainer", "pl_module", "batch", "batch_idx", "dataloader_idx=0"],
    "on_test_batch_end": ["trainer", "pl_module", "outputs", "batch", "batch_idx",
                          "dataloader_idx=0"],
    "on_sanity_check_start": ["trainer", "pl_module"],
    "on_sanity_check_end": ["trainer", "pl_module"],
    "on_train_batch_end": ["trainer", "pl_module", "outputs", "batch", "batch_idx"],
}


def params(fn):
    out = []
    for p in list(inspect.signature(fn).parameters.values())[1:]:  # without self
        out.append(p.name if p.default is inspect.Parameter.empty else "%s=%r" % (p.name, p.default))
    return out


def check_hook_signatures():
    hooks = [n for n, v in vars(ShardLensCallback).items() if n.startswith("on_") and callable(v)]
    assert hooks, "ShardLensCallback defines no hooks"
    for name in hooks:
        if shardlens_recorder.LIGHTNING is not None:  # the real Callback
            want = params(getattr(_CallbackBase, name))
        else:
            assert name in LIGHTNING2_HOOKS, "%s is no Lightning 2.x Callback hook" % name
            want = LIGHTNING2_HOOKS[name]
        got = params(getattr(ShardLensCallback, name))
        assert got == want, (name, got, want)
    print("hook signatures match Lightning 2.x (%s): %s"
          % (shardlens_recorder.LIGHTNING or "stand-in table", ", ".join(sorted(hooks))))


def labels(n, mult):
    i = torch.arange(n)
    return (i * mult + i // 3) % C


def predict(index):
    return (index * 5 + 2) % C


class Module:
    """A LightningModule stand-in: validation_step returns what the callback records; its
    own on_validation_epoch_end reports a matrix (after the callbacks' hook, as Lightning)."""

    def __init__(self, recorder):
        self.recorder = recorder
        self.local = None
        self.reported = {}  # (sanity, epoch) -> the matrix it reported

    def on_validation_epoch_start(self, trainer):
        self.local = torch.zeros(C, C, dtype=torch.int64)

    def validation_step(self, batch, batch_idx):
        index, x, y = batch
        logits = torch.nn.functional.one_hot(predict(x[:, 0].long()), C).float()
        self.local += torch.bincount(y * C + logits.argmax(1), minlength=C * C).reshape(C, C)
        return {"index": index, "target": y, "prediction": logits}

    def on_validation_epoch_end(self, trainer):
        reported = self.local * 10  # anything the callback could not know by itself
        self.recorder.set_reported(reported)
        self.reported[(trainer.sanity_checking, trainer.current_epoch)] = reported.tolist()

    test_step = validation_step
    on_test_epoch_start = on_validation_epoch_start

    def on_test_epoch_end(self, trainer):
        pass


class Trainer:
    """The attributes ShardLensCallback reads, and Lightning 2.x's hook order."""

    def __init__(self, callbacks, rank, max_epochs, limit_val_batches, num_sanity_val_steps):
        self.callbacks = callbacks
        self.global_rank = rank
        self.world_size = W
        self.max_epochs = max_epochs
        self.limit_val_batches = limit_val_batches
        self.num_sanity_val_steps = num_sanity_val_steps
        self.current_epoch = 0
        self.sanity_checking = False
        self.testing = False
        self.val_dataloaders = None  # set by fit / test, as Lightning's properties
        self.test_dataloaders = None
        self.calls = []

    def _hook(self, name, module, *args, module_args=None):
        """Callbacks first, then the LightningModule (lightning.pytorch.trainer.call)."""
        self.calls.append(name)
        for cb in self.callbacks:
            fn = getattr(cb, name, None)
            if fn is not None:
                fn(self, module, *args)
        fn = getattr(module, name, None)
        if fn is not None:
            fn(self, *(module_args or ()))

    def _evaluation_loop(self, module, loader, max_batches, prefix):
        self._hook("on_%s_start" % prefix, module)
        self._hook("on_%s_epoch_start" % prefix, module)
        step = module.test_step if prefix == "test" else module.validation_step
        for batch_idx, batch in enumerate(loader):
            if max_batches is not None and batch_idx >= max_batches:
                break
            self._hook("on_%s_batch_start" % prefix, module, batch, batch_idx)
            out = step(batch, batch_idx)
            self._hook("on_%s_batch_end" % prefix, module, out, batch, batch_idx)
        self._hook("on_%s_epoch_end" % prefix, module)
        self._hook("on_%s_end" % prefix, module)

    def _validate(self, module, loader):
        # _EvaluationLoop.reset: _set_sampler_epoch(dl, fit_loop.epoch_progress.current.processed)
        loader.sampler.set_epoch(self.current_epoch)
        limit = self.num_sanity_val_steps if self.sanity_checking else self.limit_val_batches
        self._evaluation_loop(module, loader, limit, "validation")

    def fit(self, module, val_loader):
        self.val_dataloaders = val_loader
        self._hook("on_fit_start", module)
        self.sanity_checking = True  # Trainer._run_sanity_check
        self._hook("on_sanity_check_start", module)
        self._validate(module, val_loader)
        self._hook("on_sanity_check_end", module)
        self.sanity_checking = False
        self._hook("on_train_start", module)
        for epoch in range(self.max_epochs):
            self.current_epoch = epoch
            self._hook("on_train_epoch_start", module)
            for batch_idx in range(2):  # training batches: nothing for the callback
                self._hook("on_train_batch_start", module, None, batch_idx)
                self._hook("on_train_batch_end", module, {"loss": 0.0}, None, batch_idx)
            self._validate(module, val_loader)  # val_check_interval=1.0: end of the epoch
            self._hook("on_train_epoch_end", module)
        self.current_epoch = self.max_epochs  # epoch_progress.current.completed
        self._hook("on_train_end", module)
        self._hook("on_fit_end", module)

    def test(self, module, test_loader):
        self.testing = True
        self.test_dataloaders = test_loader
        self._evaluation_loop(module, test_loader, None, "test")
        self.testing = False


def loaders(rank):
    x = torch.arange(N, dtype=torch.float32).reshape(N, 1)
    val = IndexedDataset(torch.utils.data.TensorDataset(x, labels(N, 3)))
    vs = torch.utils.data.DistributedSampler(val, num_replicas=W, rank=rank, shuffle=True, seed=0)
    xt = torch.arange(N_TEST, dtype=torch.float32).reshape(N_TEST, 1)
    test = IndexedDataset(torch.utils.data.TensorDataset(xt, labels(N_TEST, 1)))
    ts = torch.utils.data.DistributedSampler(test, num_replicas=W, rank=rank, shuffle=False)
    return (torch.utils.data.DataLoader(val, batch_size=B, sampler=vs),
            torch.utils.data.DataLoader(test, batch_size=B, sampler=ts))


def expected_val_indices(rank, epoch, batches):
    s = torch.utils.data.DistributedSampler(range(N), num_replicas=W, rank=rank, shuffle=True,
                                            seed=0)
    s.set_epoch(epoch)
    return list(iter(s))[:batches * B]


def load(out_dir, name):
    path = os.path.join(out_dir, name)
    assert os.path.exists(path), "missing %s (have %s)" % (name, sorted(os.listdir(out_dir)))
    return np.load(path)


def check_dump(d, rank, epoch, indices, n, mult, sanity, reported=None):
    idx = torch.tensor(indices)
    assert int(d["epoch"]) == epoch and d["epoch"].shape == (), (d["epoch"], epoch)
    assert int(d["rank"]) == rank and int(d["world_size"]) == W
    assert int(d["dataset_size"]) == n
    assert d["index"].tolist() == indices, (rank, epoch, d["index"].tolist(), indices)
    assert d["target"].tolist() == labels(n, mult)[idx].tolist()
    assert d["prediction"].tolist() == predict(idx).tolist()
    if sanity:
        assert int(d["sanity"]) == 1 and d["sanity"].shape == ()
        assert all(f & SANITY for f in d["flags"].tolist()), d["flags"]
    else:
        assert "sanity" not in d.files
        assert not any(f & SANITY for f in d["flags"].tolist()), d["flags"]
    if reported is not None:
        assert d["reported"].tolist() == reported, (d["reported"].tolist(), reported)


def run_fit_and_test(out_dir, callback_args, test_too=True):
    modules = []
    for rank in range(W):
        rec = ShardLensRecorder(out_dir, num_classes=C, batch_size=B)
        module = Module(rec)
        trainer = Trainer([ShardLensCallback(rec, **callback_args)], rank, MAX_EPOCHS,
                          LIMIT_VAL, SANITY_STEPS)
        val_loader, test_loader = loaders(rank)
        trainer.fit(module, val_loader)
        if test_too:
            trainer.test(module, test_loader)
        assert not rec.sanity and rec.stage is None
        modules.append(module)
    return modules


def test_stand_in_trainer(cli):
    check_hook_signatures()
    for var in ("RANK", "WORLD_SIZE"):
        os.environ.pop(var, None)  # the rank must come from the trainer
    with tempfile.TemporaryDirectory() as out_dir:
        modules = run_fit_and_test(out_dir, {})
        want = {"eval_sanity_epoch0_rank%d.npz" % r for r in range(W)}
        want |= {"eval_epoch%d_rank%d.npz" % (e, r) for e in range(MAX_EPOCHS) for r in range(W)}
        want |= {"eval_test_epoch%d_rank%d.npz" % (MAX_EPOCHS, r) for r in range(W)}
        assert set(os.listdir(out_dir)) == want, sorted(os.listdir(out_dir))
        for r in range(W):
            d = load(out_dir, "eval_sanity_epoch0_rank%d.npz" % r)
            check_dump(d, r, 0, expected_val_indices(r, 0, SANITY_STEPS), N, 3, True,
                       modules[r].reported[(True, 0)])
            seen = []
            for e in range(MAX_EPOCHS):
                d = load(out_dir, "eval_epoch%d_rank%d.npz" % (e, r))
                indices = expected_val_indices(r, e, LIMIT_VAL)
                check_dump(d, r, e, indices, N, 3, False, modules[r].reported[(False, e)])
                seen.append(indices)
            assert len({tuple(s) for s in seen}) == MAX_EPOCHS, seen  # no dump overwritten
            d = load(out_dir, "eval_test_epoch%d_rank%d.npz" % (MAX_EPOCHS, r))
            test_indices = list(range(r, N_TEST + (-N_TEST) % W, W))
            test_indices = [i % N_TEST for i in test_indices]  # DistributedSampler padding
            check_dump(d, r, MAX_EPOCHS, test_indices, N_TEST, 1, False)
            assert d["flags"].tolist()[-1] == (1 if r == 1 else 0)  # rank 1 got the padding
        print("fit + test: sanity dump flagged, %d epoch dumps per rank kept, test dump separate"
              % MAX_EPOCHS)
        dumps = [os.path.join(out_dir, "eval_epoch1_rank%d.npz" % r) for r in range(W)]
        r = subprocess.run([cli, "import"] + dumps + [
            "--out", os.path.join(out_dir, "e1.slrun"), "--format", "json"],
            capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        report = json.loads(r.stdout)
        for k in range(W):  # the module reported 10 x its local matrix
            local = [[v // 10 for v in row] for row in modules[k].reported[(False, 1)]]
            assert report["per_rank"][k] == local, (k, report["per_rank"][k], local)
        print("epoch 1 dumps import with shardlens-cli")
    with tempfile.TemporaryDirectory() as out_dir:
        run_fit_and_test(out_dir, {"sanity": False, "stages": ("validate",)})
        want = {"eval_epoch%d_rank%d.npz" % (e, r) for e in range(MAX_EPOCHS) for r in range(W)}
        assert set(os.listdir(out_dir)) == want, sorted(os.listdir(out_dir))
        print("sanity=False, stages=('validate',): epoch dumps only")



def test_stand_in_trainer_without_lightning(cli):
    """The same test in an interpreter that cannot import Lightning."""
    env = dict(os.environ, SHARDLENS_RECORDER_WITHOUT_LIGHTNING="1")
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-s", "-q",
                        "--cli", cli, "%s::test_stand_in_trainer" % os.path.abspath(__file__)],
                       capture_output=True, text=True, timeout=300, env=env,
                       cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "hook signatures match Lightning 2.x (stand-in table)" in r.stdout, r.stdout[-4000:]
