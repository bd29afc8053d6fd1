#!/usr/bin/env python3
"""Reference gamma-index numbers from pymedphys 0.41.0 for Penumbra's C++ gamma tests.

Run ONCE BY HAND, never by the test suite: the tests read the JSON this script
writes (tests/compare/reference/pymedphys_brain_gamma.json) and need no Python.

Set-up (Python 3.11, outside the repository):

    python3 -m venv /tmp/pmp-venv
    /tmp/pmp-venv/bin/pip install pymedphys==0.41.0 pydicom==3.0.2 numpy==2.4.6 \
        scipy==1.17.1 numba==0.68.1

(numba is needed: pymedphys.gamma's default interp_algo="pymedphys" is a numba
kernel; pymedphys lists numba only under its extras.)

Modes
-----
1. Brain mode (default):

       /tmp/pmp-venv/bin/python scripts/reference/pymedphys_gamma.py

   Reads the two RT Doses of the brain SRS RayStation case (read-only, from
   /work/shared/data/patients/brain-srs-raystation/, never copied into the repo):
   reference = IMRT dose, evaluated = VMAT dose. Gets the (z, y, x) axes in mm with
   pymedphys.dicom.zyx_and_dose_from_dataset, checks them against the DICOM
   attributes (and the dose against pixel_array * DoseGridScaling, in Gy), then runs
   pymedphys.gamma (global, normalisation = reference max, 10 % lower cut-off) for
   3 %/3 mm and 2 %/2 mm, and writes criteria, point counts, pass rates,
   mean/percentile gamma, wall times and the environment to
   tests/compare/reference/pymedphys_brain_gamma.json. Default runs (--runs):
     * interp_fraction 10 (pymedphys default) and 20, max_gamma=None (no clipping,
       exact percentiles);
     * interp_fraction 10 and 40, max_gamma=2 (values > 2 clipped to 2; the pass
       rate is unaffected since the search still covers 2 x DTA). The 10/20/40
       series shows the sub-step convergence: pymedphys samples the evaluated dose
       (trilinear) only on discrete spherical shells, so its gamma can only
       overestimate the continuous minimum; finer sampling lowers gamma towards it
       and the pass rate rises (the point sets are not nested, so this is a trend,
       not a per-point guarantee).
   About 1 h on 2 cores (AMD EPYC, numba 2 threads): 2%/2 mm at interp_fraction 40
   alone took 27 min, 3%/3 mm at 40 12 min, 2%/2 mm at 20 13 min.

2. Bench mode:

       python scripts/reference/pymedphys_gamma.py --bench REF.mhd EVAL.mhd \
           --dd 2 --dta 2 [--subset N] [--max-gamma 2|none]

   Reads two MetaImage volumes (ASCII .mhd header, NDims 3, MET_FLOAT little-endian
   .raw, x fastest, identity TransformMatrix), times pymedphys.gamma on them (global,
   10 % cut-off, default interp_fraction 10) and prints one JSON line to stdout. With
   --subset N only N random reference points above the cut-off are computed
   (pymedphys's random_subset, numpy seed --seed) and the full-grid time is
   extrapolated linearly; the output says so.

Pass rate: 100 * count(gamma <= 1) / count(non-NaN gamma), as in pymedphys's gamma
documentation notebooks. pymedphys's internal helper
pymedphys._gamma.utilities.calculate_pass_rate (used by its gamma_percent_pass)
uses gamma < 1 instead; both are written to the JSON.

Timings exclude numba's one-off JIT compilation (a tiny warm-up call runs first).
"""

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time
import warnings

import numpy as np

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DATA_DIR = "/work/shared/data/patients/brain-srs-raystation"
REF_DOSE = os.path.join(DATA_DIR, "imrt", "RD1.2.752.243.1.1.20180405114728128.4000.85245.dcm")
EVAL_DOSE = os.path.join(DATA_DIR, "vmat", "RD1.2.752.243.1.1.20180405120828294.3200.66183.dcm")
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "compare", "reference", "pymedphys_brain_gamma.json")

CUTOFF_PERCENT = 10.0
PERCENTILES = (50, 90, 95, 99)
DEFAULT_RUNS = ("3/3@10:none,3/3@20:none,2/2@10:none,2/2@20:none,"
                "3/3@10:2,2/2@10:2,3/3@40:2,2/2@40:2")


def _import_pymedphys():
    import pymedphys  # noqa: F401  (imported lazily so --help works without it)
    import pymedphys.dicom  # noqa: F401

    return pymedphys


def environment():
    import pymedphys
    import scipy

    env = {
        "python": platform.python_version(),
        "pymedphys": pymedphys.__version__,
        "numpy": np.__version__,
        "scipy": scipy.__version__,
        "uname_a": subprocess.run(["uname", "-a"], capture_output=True, text=True).stdout.strip(),
        "nproc": subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip(),
    }
    try:
        import pydicom

        env["pydicom"] = pydicom.__version__
    except ImportError:
        pass
    try:
        import numba

        env["numba"] = numba.__version__
        env["numba_threads"] = int(numba.get_num_threads())
    except ImportError:
        env["numba"] = None
    return env


def _max_gamma_arg(text):
    if text.lower() in ("none", "inf"):
        return None
    return float(text)


def run_gamma(axes_ref, dose_ref, axes_eval, dose_eval, dd, dta, interp_fraction, max_gamma,
              random_subset=None):
    """One pymedphys.gamma call (global, reference-max normalisation, 10 % cut-off).

    Returns (gamma array, wall seconds of the pymedphys.gamma call alone)."""
    import pymedphys

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        # quiet= is deprecated in 0.41.0 (it now uses logging) but still accepted.
        warnings.simplefilter("ignore", DeprecationWarning)
        gamma = pymedphys.gamma(
            axes_ref, dose_ref, axes_eval, dose_eval,
            dose_percent_threshold=dd,
            distance_mm_threshold=dta,
            lower_percent_dose_cutoff=CUTOFF_PERCENT,
            interp_fraction=interp_fraction,
            max_gamma=max_gamma,
            local_gamma=False,
            global_normalisation=None,
            random_subset=random_subset,
            quiet=True,
        )
    return gamma, time.perf_counter() - t0


def warm_up_jit():
    """Compile pymedphys's numba interpolation kernel before anything is timed."""
    ax = tuple(np.arange(5, dtype=float) for _ in range(3))
    d = np.ones((5, 5, 5))
    run_gamma(ax, d, ax, d, 3, 3, 10, 2.0)


def gamma_stats(gamma, max_gamma):
    valid = gamma[~np.isnan(gamma)]
    n = int(valid.size)
    stats = {
        "evaluated_points": n,
        "nan_points": int(np.isnan(gamma).sum()),
        "total_points": int(gamma.size),
        "pass_rate_percent": 100.0 * float(np.count_nonzero(valid <= 1.0)) / n if n else None,
        "pass_rate_percent_strict_lt1": 100.0 * float(np.count_nonzero(valid < 1.0)) / n if n else None,
        "mean_gamma": float(valid.mean()) if n else None,
        "gamma_percentiles": {str(p): float(np.percentile(valid, p)) for p in PERCENTILES} if n else None,
        "max_gamma_found": float(valid.max()) if n else None,
    }
    if max_gamma is not None and n:
        clipped = int(np.count_nonzero(valid >= max_gamma))
        stats["points_clipped_at_max_gamma"] = clipped
        stats["percent_clipped_at_max_gamma"] = 100.0 * clipped / n
    return stats


# --------------------------------------------------------------------------- brain mode

def load_rtdose(path):
    """Read an RT Dose, return ((z, y, x) axes in mm, dose in Gy) via pymedphys, after checks."""
    import pydicom
    import pymedphys

    ds = pydicom.dcmread(path)
    raw = ds.pixel_array.astype(np.float64)  # read before pymedphys touches the transfer syntax
    scaling = float(ds.DoseGridScaling)
    (z, y, x), dose = pymedphys.dicom.zyx_and_dose_from_dataset(ds)
    dose = np.asarray(dose, dtype=np.float64)

    # pymedphys documents (z, y, x) in DICOM patient mm, dose = pixel_array * DoseGridScaling.
    if str(ds.DoseUnits).upper() != "GY":
        raise SystemExit(f"{path}: DoseUnits {ds.DoseUnits!r}, expected GY")
    iop = [float(v) for v in ds.ImageOrientationPatient]
    if iop != [1, 0, 0, 0, 1, 0]:
        raise SystemExit(f"{path}: orientation {iop} is not HFS identity; checks below assume it")
    ipp = [float(v) for v in ds.ImagePositionPatient]
    row_sp, col_sp = (float(v) for v in ds.PixelSpacing)
    exp_x = ipp[0] + col_sp * np.arange(int(ds.Columns))
    exp_y = ipp[1] + row_sp * np.arange(int(ds.Rows))
    exp_z = ipp[2] + np.array([float(v) for v in ds.GridFrameOffsetVector])
    for name, got, exp in (("x", x, exp_x), ("y", y, exp_y), ("z", z, exp_z)):
        if not np.allclose(got, exp, rtol=0, atol=1e-9):
            raise SystemExit(f"{path}: pymedphys {name} axis differs from DICOM attributes")
        d = np.diff(got)
        if not (np.all(d > 0) and np.allclose(d, d[0])):
            # pymedphys's numba interpolation (skip_checks=True inside gamma) needs this.
            raise SystemExit(f"{path}: {name} axis not ascending and evenly spaced")
    if dose.shape != (len(z), len(y), len(x)):
        raise SystemExit(f"{path}: dose shape {dose.shape} != (len z, len y, len x)")
    if not np.allclose(dose, raw * scaling, rtol=0, atol=1e-12):
        raise SystemExit(f"{path}: dose != pixel_array * DoseGridScaling")
    info = {
        "file": path,
        "shape_zyx": list(dose.shape),
        "x_mm": [float(x[0]), float(x[-1]), float(x[1] - x[0])],
        "y_mm": [float(y[0]), float(y[-1]), float(y[1] - y[0])],
        "z_mm": [float(z[0]), float(z[-1]), float(z[1] - z[0])],
        "dose_grid_scaling": scaling,
        "max_dose_gy": float(dose.max()),
    }
    return (np.asarray(z, float), np.asarray(y, float), np.asarray(x, float)), dose, info


def parse_runs(spec):
    """'DD/DTA@FRAC[:MAXG],...' -> [(dd, dta, interp_fraction, max_gamma or None)]."""
    runs = []
    for item in spec.split(","):
        crit, rest = item.split("@")
        frac, _, mg = rest.partition(":")
        dd, dta = (float(v) for v in crit.split("/"))
        runs.append((dd, dta, int(frac), _max_gamma_arg(mg) if mg else None))
    return runs


def brain_mode(args):
    _import_pymedphys()
    axes_ref, dose_ref, ref_info = load_rtdose(args.ref)
    axes_eval, dose_eval, eval_info = load_rtdose(args.eval)
    same_grid = all(a.shape == b.shape and np.allclose(a, b) for a, b in zip(axes_ref, axes_eval))

    ref_max = float(dose_ref.max())
    cutoff_gy = CUTOFF_PERCENT / 100.0 * ref_max
    above = int(np.count_nonzero(dose_ref >= cutoff_gy))

    warm_up_jit()
    runs = []
    for dd, dta, frac, max_gamma in parse_runs(args.runs):
        mg_text = "None (inf)" if max_gamma is None else max_gamma
        print(f"running {dd:g}%/{dta:g}mm interp_fraction={frac} max_gamma={mg_text}",
              file=sys.stderr, flush=True)
        gamma, secs = run_gamma(axes_ref, dose_ref, axes_eval, dose_eval, dd, dta, frac, max_gamma)
        run = {
            "criteria": f"{dd:g}%/{dta:g}mm global",
            "dose_percent_threshold": dd,
            "distance_mm_threshold": dta,
            "local_gamma": False,
            "global_normalisation": "reference max (global_normalisation=None)",
            "lower_percent_dose_cutoff": CUTOFF_PERCENT,
            "interp_fraction": frac,
            "search_step_mm": dta / frac,
            "max_gamma": mg_text,
            "reference_max_dose_gy": ref_max,
            "wall_time_s": round(secs, 3),
        }
        run.update(gamma_stats(gamma, max_gamma))
        runs.append(run)
        print(json.dumps(run), file=sys.stderr, flush=True)

    out = {
        "description": "pymedphys 0.41.0 gamma of the brain SRS RayStation case: reference = IMRT RT "
                       "Dose, evaluated = VMAT RT Dose. Written once by hand by "
                       "scripts/reference/pymedphys_gamma.py; not regenerated by the tests.",
        "command": shlex.join(sys.orig_argv),
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "environment": environment(),
        "definitions": {
            "pass_rate_percent": "100 * count(gamma <= 1) / count(non-NaN gamma) (pymedphys docs notebooks)",
            "pass_rate_percent_strict_lt1": "100 * count(gamma < 1) / count(non-NaN gamma) "
                                            "(pymedphys._gamma.utilities.calculate_pass_rate)",
            "evaluated_points": "non-NaN gamma = reference points with dose >= cut-off "
                                "(cut-off = lower_percent_dose_cutoff % of global normalisation)",
            "gamma_percentiles": "numpy.percentile, linear method, over non-NaN gamma; values above "
                                 "max_gamma are clipped to max_gamma by pymedphys",
            "wall_time_s": "pymedphys.gamma call only, after a numba JIT warm-up",
            "axes": "pymedphys (z, y, x) in mm, DICOM patient coordinates, dose[z, y, x] in Gy",
        },
        "reference_dose": ref_info,
        "evaluated_dose": eval_info,
        "same_grid": bool(same_grid),
        "cutoff_dose_gy": cutoff_gy,
        "reference_points_at_or_above_cutoff": above,
        "runs": runs,
    }
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print(f"wrote {args.out}", file=sys.stderr)


# --------------------------------------------------------------------------- bench mode

def read_mhd(path):
    """Minimal MetaImage reader: 3-D, MET_FLOAT little-endian, x fastest, identity transform.

    Returns ((z, y, x) axes in mm, array[z, y, x] as float64)."""
    header = {}
    with open(path, "r") as f:
        for line in f:
            if "=" in line:
                k, v = line.split("=", 1)
                header[k.strip()] = v.strip()
    if int(header.get("NDims", 0)) != 3:
        raise SystemExit(f"{path}: NDims must be 3")
    if header.get("ElementType") != "MET_FLOAT":
        raise SystemExit(f"{path}: ElementType must be MET_FLOAT")
    for key in ("BinaryDataByteOrderMSB", "ElementByteOrderMSB"):
        if header.get(key, "False").lower() == "true":
            raise SystemExit(f"{path}: big-endian data not supported")
    if "TransformMatrix" in header:
        tm = np.array([float(v) for v in header["TransformMatrix"].split()])
        if not np.allclose(tm, np.eye(3).ravel()):
            raise SystemExit(f"{path}: TransformMatrix must be identity")
    dims = [int(v) for v in header["DimSize"].split()]
    spacing = [float(v) for v in header.get("ElementSpacing", header.get("ElementSize", "1 1 1")).split()]
    offset = [float(v) for v in header.get("Offset", header.get("Position", "0 0 0")).split()]
    data_file = header["ElementDataFile"]
    if data_file == "LOCAL":
        raise SystemExit(f"{path}: ElementDataFile LOCAL not supported")
    raw_path = data_file if os.path.isabs(data_file) else os.path.join(os.path.dirname(path), data_file)
    nx, ny, nz = dims
    data = np.fromfile(raw_path, dtype="<f4")
    if data.size != nx * ny * nz:
        raise SystemExit(f"{raw_path}: {data.size} floats, expected {nx * ny * nz}")
    dose = data.reshape(nz, ny, nx).astype(np.float64)
    axes = tuple(offset[i] + spacing[i] * np.arange(dims[i]) for i in (2, 1, 0))
    return axes, dose


def bench_mode(args):
    _import_pymedphys()
    ref_path, eval_path = args.bench
    axes_ref, dose_ref = read_mhd(ref_path)
    axes_eval, dose_eval = read_mhd(eval_path)
    warm_up_jit()
    ref_max = float(dose_ref.max())
    above = int(np.count_nonzero(dose_ref >= CUTOFF_PERCENT / 100.0 * ref_max))
    if args.subset is not None:
        np.random.seed(args.seed)  # pymedphys's random_subset uses np.random.shuffle
    gamma, secs = run_gamma(axes_ref, dose_ref, axes_eval, dose_eval, args.dd, args.dta, 10,
                            args.max_gamma, random_subset=args.subset)
    stats = gamma_stats(gamma, args.max_gamma)
    out = {
        "mode": "bench",
        "ref": ref_path,
        "eval": eval_path,
        "shape_zyx": list(dose_ref.shape),
        "criteria": f"{args.dd:g}%/{args.dta:g}mm global",
        "lower_percent_dose_cutoff": CUTOFF_PERCENT,
        "interp_fraction": 10,
        "max_gamma": args.max_gamma if args.max_gamma is not None else "None (inf)",
        "reference_max": ref_max,
        "points_at_or_above_cutoff": above,
        "evaluated_points": stats["evaluated_points"],
        "pass_rate_percent": stats["pass_rate_percent"],
        "pass_rate_percent_strict_lt1": stats["pass_rate_percent_strict_lt1"],
        "mean_gamma": stats["mean_gamma"],
        "seconds": round(secs, 4),
        "pymedphys": environment()["pymedphys"],
        "nproc": os.cpu_count(),
    }
    if args.subset is not None:
        n = stats["evaluated_points"]
        out["subset"] = args.subset
        out["seed"] = args.seed
        out["extrapolated"] = True
        out["seconds_full_grid_extrapolated"] = round(secs * above / n, 4) if n else None
        out["note"] = (f"pass rate and seconds are for a random subset of {n} of {above} reference "
                       "points above the cut-off; seconds_full_grid_extrapolated = seconds * "
                       f"{above} / {n} (linear extrapolation, not measured)")
    print(json.dumps(out))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bench", nargs=2, metavar=("REF.mhd", "EVAL.mhd"),
                   help="bench mode: time pymedphys.gamma on two MetaImage files")
    p.add_argument("--dd", type=float, default=2.0, help="bench: dose difference %% (global)")
    p.add_argument("--dta", type=float, default=2.0, help="bench: distance to agreement, mm")
    p.add_argument("--subset", type=int, default=None, help="bench: random_subset point count")
    p.add_argument("--seed", type=int, default=12345, help="bench: numpy seed for --subset")
    p.add_argument("--max-gamma", type=_max_gamma_arg, default=2.0,
                   help="bench: pymedphys max_gamma (number or 'none'); default 2.0")
    p.add_argument("--ref", default=REF_DOSE, help="brain mode: reference RT Dose")
    p.add_argument("--eval", default=EVAL_DOSE, help="brain mode: evaluated RT Dose")
    p.add_argument("--runs", default=DEFAULT_RUNS,
                   help="brain mode: comma list of DD/DTA@INTERP_FRACTION[:MAX_GAMMA] "
                        "(MAX_GAMMA number or 'none'; default none); default %(default)s")
    p.add_argument("--out", default=DEFAULT_OUT, help="brain mode: output JSON")
    args = p.parse_args()
    if args.bench:
        bench_mode(args)
    else:
        brain_mode(args)


if __name__ == "__main__":
    main()
