"""scancheck's main job: verify every registered scan variant and say why it is right or wrong.

For each variant: the interval proof over its model (correct for every associative
operator, if race-free), its hazards (race-free or not), work and depth, and its
float32 rounding against the bound from its own tree depths.  Where a GPU is
present, its kernel must also equal its model bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.cuda import LaunchError, check_block
from ...core.devices import gpu_available
from ...core.operators import interval_expected, interval_input
from ...kernels.registry import VARIANTS, Variant
from ...oracle.bounds import Verdict, classify


@dataclass
class VariantResult:
    name: str
    interval_proof: bool
    hazards: int
    work: int
    depth: int
    float32_verdict: str
    max_err_over_bound: float
    kernel: str
    #: Launch shapes (block, params) the kernel was compared at: the default and each
    #: tuning candidate.
    launches: int = 1
    #: Threads a block the model ran at (the given block, or the variant's least).
    block: int = 64

    @property
    def races(self) -> bool:
        """Whether the variant's model must show a race at this block."""
        racy = VARIANTS[self.name].racy
        return bool(racy) and self.block >= racy

    @property
    def ok(self) -> bool:
        return self.interval_proof and (self.hazards > 0) == self.races and (
            self.kernel in ("equal to model", "within bound") or self.kernel.startswith("not run"))

    def _hazards(self) -> int | str:
        # The racy negative control's hazards are its verification: say so beside them, and
        # below the block its race needs, why there are none.
        racy = VARIANTS[self.name].racy
        if not racy:
            return self.hazards
        return (f"{self.hazards} (racy by design)" if self.races
                else f"{self.hazards} (races from block {racy})")

    def row(self) -> dict[str, object]:
        """The table's row, at most 120 columns wide with the others."""
        return {
            "variant": self.name,
            "proof": "pass" if self.interval_proof else "FAIL",
            "hazards": self._hazards(),
            "work": self.work,
            "depth": self.depth,
            "float32/bound": (f"{self.float32_verdict} ({self.max_err_over_bound:.2g})"
                              if "add" in VARIANTS[self.name].operators else "n/a (no add)"),
            "kernel": KERNEL_SHOWN.get(self.kernel, self.kernel),
            "launches": self.launches,
            "verdict": "ok" if self.ok else "WRONG",
        }


#: The kernel column's words for a kernel not compared, short enough for the table.
KERNEL_SHOWN = {"not run (no GPU)": "no GPU", "not run (racy; racecheck's job)": "racy: not run",
                "not run (no add)": "no add: not run"}


def _sizes(var: Variant, block: int) -> list[int]:
    cap = var.capacity(block, var.resolve_params(None)) if var.capacity else 40 * block + 3
    return sorted({1, 2, 23, block - 1, block + 1, cap} & set(range(1, cap + 1)))


def _candidate_sizes(var: Variant, block: int, params: dict[str, int]) -> list[int]:
    """One element short of a tile, and a partial tile after two full ones.  Up to three
    tiles a look-back folds its predecessors' totals in one order only (two of them: the
    chain's T0 (+) T1), so there the kernel must equal its model bit for bit, floats too."""
    tile = block * var.resolve_params(params).get("items", 1)
    return [tile - 1, 2 * tile + 3]


def check_verify_block(block: int) -> None:
    """A LaunchError naming the limit unless ``block`` is a power of two from 2 to 1024."""
    check_block(block)
    if block < 2:
        raise LaunchError(f"block={block}: with one thread a block no two threads combine, "
                          f"and a one-block variant scans 2 elements at most, so verify "
                          f"proves nothing of its schedule; allowed: a power of two from 2 to "
                          f"1024")


def verify_variant(var: Variant, block: int = 64, gpu: bool = False) -> VariantResult:
    """Check one variant's model (and kernel, with ``gpu``) at a few hard sizes, at ``block``
    and default params, and at every candidate launch its tuned table may choose.  A
    ``block`` that is no power of two from 2 to 1024 is refused (LaunchError): its models
    compute no scan, or at one thread a block no combine of threads; one below the variant's
    least runs at that least."""
    check_verify_block(block)
    block = max(block, var.min_block)
    proof, hazards, worst, verdict = True, 0, 0.0, Verdict.EXACT
    kernel = ("not run (no GPU)" if not gpu else "not run (racy; racecheck's job)" if var.racy
              else "not run (no add)" if "add" not in var.operators else "equal to model")
    rng = np.random.default_rng(0)
    # (n, block, params, strict): strict runs must match bit for bit even where the variant
    # is not deterministic in general.
    runs = [(n, block, None, False) for n in _sizes(var, block)]
    # Candidates that differ in runtime parameters alone compile to one module, and at these
    # sizes (three tiles at most) the look-back's prefetch, its one such parameter, never fires.
    launches = {(b, var.template_key(p)) for b, p in var.candidates}
    runs += [(n, b, dict(p), True) for b, p in sorted(launches)
             for n in _candidate_sizes(var, b, dict(p))]
    for n, b, params, strict in runs:
        net = var.build_model(n, b, params)
        proof &= bool(np.array_equal(net.run(interval_input(n), "interval"),
                                     interval_expected(n, var.inclusive)))
        hazards = max(hazards, len(net.hazards(limit=50)))
        if "add" in var.operators:
            x = rng.integers(0, 1000, n).astype(np.float32) * np.float32(1.001)
            computed = net.run(x, "add")
            rep = classify(x, computed, net.metrics().output_depths, inclusive=var.inclusive)
            verdict = max(verdict, rep.verdict)
            worst = max(worst, float(rep.bound_fraction.max()))
            if gpu and not var.racy:
                kernel = _kernel_check(var, x, b, params, computed, kernel, strict)
                if strict and "float64" in var.dtypes:  # 8-byte elements move another way
                    x64 = rng.integers(0, 1000, n) * 1.001
                    kernel = _kernel_check(var, x64, b, params, net.run(x64, "add"), kernel,
                                           strict)
        if gpu and not var.racy and "segmented_add" in var.operators and params is None:
            kernel = _segmented_check(var, n, b, kernel)
    met = var.build_model(_sizes(var, block)[-1], block).metrics()
    return VariantResult(var.name, proof, hazards, met.work, met.depth,
                         verdict.label, worst, kernel, 1 + len(launches), block)


def _kernel_check(var: Variant, x: np.ndarray, block: int, params: dict[str, int] | None,
                  model_out: np.ndarray, previous: str, strict: bool = False) -> str:
    from ...core.arrays import same_bits
    from ...kernels.launch import scan

    if previous not in ("equal to model", "within bound"):
        return previous
    try:
        got = scan(x, var, "add", block, params).get()
    except LaunchError:
        if params is None:  # the default launch must run everywhere
            raise
        # A candidate this device cannot launch for this dtype (its shared memory past the
        # device's limit): no table here may name it, as the tuner finds.
        return previous
    if same_bits(got, model_out).all():
        return "equal to model" if previous != "within bound" else previous
    if not var.deterministic and not strict:
        depths = var.build_model(x.shape[0], block, params).metrics().output_depths
        if classify(x, got, depths, inclusive=var.inclusive).verdict != Verdict.BEYOND_BOUND:
            return "within bound"
    where = f"n={x.shape[0]} {x.dtype} block={block}" + (f" {params}" if params else "")
    return f"DIFFERS at {where}"


def _segmented_check(var: Variant, n: int, block: int, previous: str) -> str:
    """The head-flag segmented sum (``segmented_add`` over (flag, value) float32 pairs, a
    head about every eighth element) on the kernel and on its model: the same bits, or
    where they first differ."""
    from ...core.arrays import same_bits
    from ...kernels.launch import scan

    if previous not in ("equal to model", "within bound"):
        return previous
    rng = np.random.default_rng(n)  # its own draws: the add inputs stay those of a CPU run
    pairs = np.stack([(rng.random(n) < 0.125).astype(np.float32),
                      rng.integers(0, 1000, n).astype(np.float32) * np.float32(1.001)], axis=1)
    want = var.build_model(n, block).run(pairs, "segmented_add")
    if same_bits(scan(pairs, var, "segmented_add", block).get(), want).all():
        return previous
    return f"segmented_add DIFFERS at n={n}"


def verify_all(block: int = 64, gpu: bool | None = None) -> list[VariantResult]:
    """:func:`verify_variant` for every registered variant."""
    if gpu is None:
        gpu = gpu_available()[0]
    return [verify_variant(v, block, gpu) for v in VARIANTS.values()]
