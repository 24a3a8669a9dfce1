"""E3: identifiability. Solve phi(W') = phi(W*) by Levenberg-Marquardt from many random starts and count the
solution clusters: for generic sigma an MLP's fiber should be its permutation orbit, a CNN's the point W* alone.
With sigma = x^r (the control: scaling symmetries make every fiber a continuum) the same count must find solutions
off that orbit. One job runs both sigmas (each start's seed depends only on the architecture and degree)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from workflow.core.io import write_text
from workflow.core.step import Step

from . import identifiability, nets, points
from .points import arch_spec, point_seed, random_point

READS = ("neuromanifolds.fibers",)


def fiber_rows(specs: list[dict], degree: int, n_points: int, starts: int, max_nfev: int, seed: int,
               activation: str = "generic", log=print) -> list:
    """One row per architecture, W* and X those of its (generic) Table A row at this degree; sigma generic (that
    row's) or x^r at the same W* and X."""
    rows = []  # no wall-clock column: data files are byte-identical across clean runs (the job's time is in its record)
    for spec in specs:
        s = point_seed(seed, points.make_arch(spec).label(), degree)
        arch, c, theta, X, _ = random_point(spec, degree, n_points, s)
        if activation == "monomial":
            c = nets.activation_coeffs(degree, "monomial")
        rep = identifiability.fiber_report(arch, c, X, theta, n_starts=starts, seed=s + 1, max_nfev=max_nfev)
        rows.append({"arch": arch.label(), "kind": arch.kind, "activation": activation, "degree": degree,
                     "n_params": arch.n_params}
                    | {k: v for k, v in rep.items() if k != "cluster_orbit_dists"})
        log(f"{arch.label()}: {rep['n_converged']}/{starts} starts converged, {rep['n_clusters']} clusters "
            f"({rep['n_symmetric_clusters']} on the symmetry orbit of size {rep['orbit_size']}, {rep['n_other_clusters']} other)")
    return rows


def main(argv=None):
    step = Step("neuromanifolds", "fibers", __doc__)
    step.parser.add_argument("--generic", type=Path, required=True, help=".csv, one row per architecture: generic sigma")
    step.parser.add_argument("--monomial", type=Path, required=True, help=".csv, the same for sigma = x^r (the control)")
    args, p = step.start(argv)
    specs = [arch_spec(w) for w in p["mlp"]] + [arch_spec(k) for k in p["cnn"]]
    metrics = {}
    for activation, out in (("generic", args.generic), ("monomial", args.monomial)):  # independent seeds: as two jobs
        step.log(f"sigma {activation}")
        table = pd.DataFrame(fiber_rows(specs, p["degree"], p["n_points"], p["starts"], p["max_nfev"], p["seed"],
                                        activation, log=step.log))
        write_text(out, table.to_csv(index=False, float_format="%.6g"))
        metrics |= {f"converged_starts_{activation}": table.n_converged.sum(),
                    f"other_clusters_{activation}": table.n_other_clusters.sum()}
    step.finish(metrics=metrics, outputs=[args.generic, args.monomial])


if __name__ == "__main__":
    main()
