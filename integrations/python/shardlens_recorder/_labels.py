"""The true class of every dataset index an evaluation is checked against: what labels= gives
for a stage and loader, else the dataset's own targets. Written beside the dumps as an int64
.npy named by its content, so an evaluation of another dataset writes another file and never
overwrites one that an earlier run file was imported with (the run file names that file)."""
import hashlib
import os

STAGES = {"validate": "validate", "val": "validate", "validation": "validate",
          "test": "test"}  # the keys a labels= dict may use for a stage


def labels_array(labels, size=None):
    """The labels as an int64 ndarray, one class id per dataset index (size of them when
    given), or None when they are not exactly that. labels: a sequence, tensor or ndarray, or
    the path of a .npy holding one."""
    import numpy as np
    try:
        if isinstance(labels, (str, bytes, os.PathLike)):
            labels = np.load(os.fspath(labels), allow_pickle=False)
        elif hasattr(labels, "detach"):  # a torch tensor
            labels = labels.detach().cpu().numpy()
        arr = np.asarray(labels)
    except Exception:
        return None
    if arr.ndim != 1 or (size is not None and len(arr) != size) or len(arr) == 0:
        return None
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f" or not np.all(np.isfinite(arr)) or \
                not np.array_equal(arr, np.round(arr)):
            return None  # floats that are not integers (or strings): not class ids
    arr = arr.astype(np.int64)
    return arr if arr.min() >= 0 else None


def _save(arr, path):
    import numpy as np
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    tmp = path + ".tmp.npy"
    np.save(tmp, arr)
    os.replace(tmp, path)  # atomic: a reader sees the whole file or none
    return path


def labels_file(labels, size, path):
    """Writes the labels (labels_array) as an int64 .npy at path for `import --dataset
    npy:PATH`; None (nothing written) when they are not one class id per index."""
    arr = labels_array(labels, size)
    return None if arr is None else _save(arr, path)


def content_file(arr, out_dir, prefix):
    """{out_dir}/{prefix}_{12 hex digits of the labels' SHA-1}.npy, written unless it exists:
    the same labels give the same file, other labels another one."""
    digest = hashlib.sha1(arr.tobytes()).hexdigest()[:12]
    path = os.path.join(out_dir, "%s_%s.npy" % (prefix, digest))
    return path if os.path.exists(path) else _save(arr, path)


def _int_array(got, size):
    import numpy as np
    if got is None or isinstance(got, (str, bytes)) or callable(got):
        return None
    try:
        if hasattr(got, "detach"):
            got = got.detach().cpu().numpy()
        arr = np.asarray(got)
    except Exception:
        return None
    return arr if arr.ndim == 1 and len(arr) == size and arr.dtype.kind in "iu" else None


def _column(dataset, name):
    """A datasets.Dataset's column, read without iterating its rows: the Arrow column where
    no indices mapping (select, shuffle, ...) lies over the table, else dataset[name]."""
    try:
        table = getattr(dataset, "data", None)
        if getattr(dataset, "_indices", None) is None and hasattr(table, "column"):
            return table.column(name).to_numpy()
        return dataset[name]
    except Exception:
        return None


def dataset_labels(dataset):
    """The dataset's own labels, exactly, when it holds them without being iterated: a
    `targets` or `labels` attribute of len(dataset) (torchvision style), a TensorDataset whose
    last tensor is one integer per sample, a Hugging Face datasets.Dataset's "label" or
    "labels" column; through Subset-like wrappers (.dataset + .indices). Else None."""
    import numpy as np
    try:
        size = len(dataset)
    except Exception:
        return None
    for name in ("targets", "labels"):
        arr = _int_array(getattr(dataset, name, None), size)
        if arr is not None:
            return arr
    tensors = getattr(dataset, "tensors", None)  # torch.utils.data.TensorDataset
    if isinstance(tensors, tuple) and len(tensors) >= 2:
        arr = _int_array(tensors[-1], size)
        if arr is not None:
            return arr
    columns = getattr(dataset, "column_names", None)  # datasets.Dataset: reads a column
    if isinstance(columns, (list, tuple)) and hasattr(dataset, "features"):
        for name in ("label", "labels"):
            if name in columns:
                arr = _int_array(_column(dataset, name), size)
                if arr is not None:
                    return arr
    inner, indices = getattr(dataset, "dataset", None), getattr(dataset, "indices", None)
    if inner is not None and indices is not None:
        base = dataset_labels(inner)
        if base is not None:
            try:
                idx = np.asarray(indices, dtype=np.int64)
            except Exception:
                return None
            if idx.ndim == 1 and len(idx) == size and (not len(idx) or
                                                        0 <= idx.min() <= idx.max() < len(base)):
                return base[idx]
    return None


def _one_array(x):
    """Whether x is one labels array (not a collection of them): a path, an ndarray or tensor,
    or a sequence whose items are numbers."""
    if isinstance(x, (str, bytes, os.PathLike)) or hasattr(x, "shape") or hasattr(x, "detach"):
        return True
    return not any(isinstance(v, (str, bytes, os.PathLike, list, tuple)) or
                   getattr(v, "ndim", 0) >= 1 for v in x)


def pick(labels, stage, loader):
    """What labels= says for one loader of one stage: (labels, per_loader), labels None when
    it says nothing. labels= may be one array (every loader whose dataset has its length), a
    list/tuple of arrays indexed by dataloader_idx, a dict {dataloader_idx: array}, or a dict
    {"validate"/"val"/"test": any of these}."""
    if labels is None:
        return None, False
    if isinstance(labels, dict):
        if any(isinstance(k, str) for k in labels):
            unknown = [k for k in labels if k not in STAGES]
            if unknown:
                raise ValueError("labels= keys %s are neither a stage (%s) nor a dataloader_idx"
                                 % (unknown, ", ".join(sorted(STAGES))))
            found = [v for k, v in labels.items() if STAGES[k] == stage]
            return pick(found[0], stage, loader) if found else (None, True)
        return labels.get(loader), True
    if isinstance(labels, (list, tuple)) and labels and not _one_array(labels):
        return (labels[loader] if loader < len(labels) else None), True
    return labels, False


def check_argument(labels):
    """Refuses a labels= dict whose keys are neither stages nor loader indices, at once."""
    pick(labels, "validate", 0)
