"""Writing one dump: the arrays dump_format.json names, in its dtypes, as .npz (numpy) or .pt
(torch.save of a dict of tensors), each file written atomically (temporary file + rename,
so a reader never sees half a file). Only numpy and torch are needed, and only when used."""
import json
import os
import tempfile

from . import _format

# The schema's dtypes; "int64 or float64" is a matrix: integers stay integers, float
# counters (a normalize-then-sum's fractions) stay floats.
_MATRIX = "int64 or float64"


def settings_bytes(settings):
    """settings_json's value: the UTF-8 bytes of the settings object, keys sorted."""
    return list(json.dumps(settings, sort_keys=True).encode("utf-8"))


# At least this many cells before a matrix may be written sparse (as the C++ side,
# core/runfile/sparse_matrix.h: kSparseMinCells): a small one keeps the form numpy.load shows.
SPARSE_MIN_CELLS = 4096


def matrix_arrays(name, value):
    """The arrays that hold matrix `name` ("matrix" or "reported"): {name: the matrix}, or,
    when its nonzero cells take fewer values than it (3 a cell against C * C, C * C >=
    SPARSE_MIN_CELLS), {name + "_sparse": [K, 3] (row, column, value), "sparse_classes": C}:
    at 1000 classes a validation's matrix is 8 MB dense and mostly zeros. Integer matrices
    give int64 cells, others float64 (as the dense form's dtypes); NaN is kept (it is nonzero),
    for the reader to refuse."""
    import numpy as np
    if hasattr(value, "detach"):
        value = value.detach().cpu().numpy()
    a = np.asarray(value)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.size < SPARSE_MIN_CELLS:
        return {name: a}
    flat = a.reshape(-1)
    nonzero = np.flatnonzero(flat)
    if 3 * len(nonzero) >= flat.size:
        return {name: a}
    dtype = np.int64 if a.dtype.kind in "biu" else np.float64
    cells = np.empty((len(nonzero), 3), dtype)
    cells[:, 0], cells[:, 1] = np.divmod(nonzero, a.shape[1])
    cells[:, 2] = flat[nonzero]
    return {name + "_sparse": cells, "sparse_classes": a.shape[0]}


def _dtype_of(name):
    spec = _format.ARRAYS.get(name)
    if spec is None:
        raise KeyError("'%s' is not an array of dump_format.json" % name)
    return spec["dtype"]


def _atomic_write(path, write):
    """Calls write(temp_path), then renames over `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_npz(arrays, path):
    """arrays: name -> value (nested list, ndarray, tensor or scalar). Returns path."""
    import numpy as np

    def as_numpy(name, value):
        dtype = _dtype_of(name)
        if hasattr(value, "detach"):
            value = value.detach().cpu().numpy()
        a = np.asarray(value)
        if dtype == _MATRIX:
            dtype = np.int64 if a.dtype.kind in "biu" else np.float64
        # copy=False: at 1000 classes a copy of the 8 MB matrix was a tenth of save()
        return a.astype(dtype, copy=False)

    data = {name: as_numpy(name, value) for name, value in arrays.items()}

    def write(tmp):
        with open(tmp, "wb") as f:
            np.savez(f, **data)

    _atomic_write(path, write)
    return path


def write_pt(arrays, path):
    """The same arrays as torch tensors in one torch.save'd dict. Returns path."""
    import torch

    def as_tensor(name, value):
        dtype = _dtype_of(name)
        t = value.detach().cpu() if hasattr(value, "detach") else torch.tensor(value)
        if dtype == _MATRIX:
            return t.to(torch.float64) if t.is_floating_point() else t.to(torch.int64)
        return t.to(getattr(torch, dtype))

    data = {name: as_tensor(name, value) for name, value in arrays.items()}
    _atomic_write(path, lambda tmp: torch.save(data, tmp))
    return path


WRITERS = {"npz": write_npz, "pt": write_pt}
