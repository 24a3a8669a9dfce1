"""E5: critical exposure. On random data sets, fit a sparse subnetwork (MLP: one neuron fewer; CNN: zero-padded
filters) to a critical point of the MSE, embed it in the full network and measure the full gradient there.
One job runs both network kinds (p: the whole `critical` section: data, mlp, cnn)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step

from . import nets, points, training
from .points import arch_spec

READS = ("neuromanifolds.critical",)

KINDS = ("mlp", "cnn")


def data_set(arch, c, n_points: int, noise: float, seed: int, index: int):
    """Data set `index`: x ~ N(0, I), y = a dense random teacher of the full architecture plus Gaussian noise
    (not realisable by the subnetwork, nor by the full network: a generic data set)."""
    rng = np.random.default_rng([seed, index])
    X = points.sample_inputs(n_points, arch.widths[0], rng)
    teacher = points.init_params(arch, rng)
    return X, nets.forward(arch, teacher, X, c) + noise * rng.standard_normal((n_points, arch.widths[-1]))


def exposure(kind: str, p: dict, c, X, Y, fit_seed: int) -> dict:
    if kind == "mlp":
        return training.mlp_critical_exposure(p["widths"], c, X, Y, seed=fit_seed, init_scale=p["init_scale"])
    return training.cnn_critical_exposure(p["kernels"], p["strides"], c, X, Y, seed=fit_seed, init_scale=p["init_scale"])


def run(kind: str, p: dict, log=print) -> pd.DataFrame:
    spec = arch_spec(p["widths"] if kind == "mlp" else p)
    arch = points.make_arch(spec)
    c = nets.activation_coeffs(p["degree"], "generic", np.random.default_rng(p["seed"]))  # one sigma for MLP and CNN
    rows = []
    for d in range(p["datasets"]):
        X, Y = data_set(arch, c, p["n_points"], p["noise"], p["seed"], d)
        rows.append({"dataset": d, "kind": kind, "arch": arch.label()} | exposure(kind, p, c, X, Y, p["seed"] + d))
        if (d + 1) % 10 == 0 or d + 1 == p["datasets"]:
            t = pd.DataFrame(rows)
            log(f"{kind}: {d + 1}/{p['datasets']} data sets, {int(t.converged.sum())} subnetwork fits converged")
    return pd.DataFrame(rows)


def main(argv=None):
    step = Step("neuromanifolds", "critical", __doc__)
    for kind in KINDS:
        step.parser.add_argument(f"--{kind}", type=Path, required=True, help=f".csv for the {kind}, one row per data set")
    args, p = step.start(argv)
    metrics, outputs = {}, []
    for kind in KINDS:  # each kind from its own seeds: as two separate jobs
        table = run(kind, {**p["data"], **p[kind]}, log=step.log)
        out = getattr(args, kind)
        write_text(out, table.to_csv(index=False, float_format="%.6g"))
        conv = table[table.converged.astype(bool)]
        flag = "full_critical" if kind == "mlp" else "not_critical"
        metrics |= {f"converged_{kind}": len(conv),
                    f"{flag}_fraction_converged_{kind}": conv[flag].mean() if len(conv) else np.nan}
        outputs.append(out)
    step.finish(metrics=metrics, outputs=outputs)


if __name__ == "__main__":
    main()
