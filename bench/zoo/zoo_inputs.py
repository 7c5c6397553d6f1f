"""The zoo's input values, shared by make_models.py (batch-1 inputs and the
torch references) and run.py (inputs of the larger batches): numpy only, so
run.py does not import torch.

An input spec is (name, dtype, dims, gen): dims are ints or dim names ("batch",
"seq", "steps"); gen is {"kind": "uniform"} (values in [-1, 1)) or
{"kind": "int", "high": H} (integers in [0, H), cast to dtype) or {"kind": "dims", "of": DIMS,
"scale": [S0, ...]} (the concrete DIMS times the scales: a Resize's sizes given as an input).
"""
import numpy as np

# The concrete value fed to each named dynamic dim; "batch" is the batch measured.
DIM_VALUES = {"batch": 1, "seq": 32, "steps": 24}


def concrete(dims, batch, dim_values=None):
    values = dim_values or DIM_VALUES
    return [batch if d == "batch" else values[d] if isinstance(d, str) else d for d in dims]


def make_input(dtype, dims, gen, seed, batch, dim_values=None):
    rng = np.random.default_rng(seed)
    shape = concrete(dims, batch, dim_values)
    if gen["kind"] == "int":
        return rng.integers(0, gen["high"], size=shape).astype(dtype)
    if gen["kind"] == "dims":
        of = concrete(gen["of"], batch, dim_values)
        return np.array([d * s for d, s in zip(of, gen["scale"])]).astype(dtype).reshape(shape)
    return (rng.random(size=shape) * 2 - 1).astype(dtype)
