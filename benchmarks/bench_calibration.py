"""Time to calibrate the noise multiplier of DP-SGD plans from scratch, PLD vs RDP.

Usage: python benchmarks/bench_calibration.py
"""

from __future__ import annotations

import time

from skdp.accounting import PrivacyPlan, calibrate

PLANS = [(1018 / 32561, 640), (256 / 32561, 2540), (0.04, 2250), (1.0, 100), (0.001, 10000)]


def main() -> None:
    print("| plan: sampling rate q, steps | epsilon | accountant | noise multiplier "
          "| epsilon spent | seconds |")
    print("|---|---|---|---|---|---|")
    for q, steps in PLANS:
        for epsilon in (0.1, 1.0, 4.0):
            for accountant in ("pld", "rdp"):
                calibrate.cache_clear()
                start = time.perf_counter()
                result = calibrate(PrivacyPlan.constant(steps, q), epsilon, 1e-5, accountant)
                seconds = time.perf_counter() - start
                print(f"| {q:.4g}, {steps} | {epsilon} | {accountant} | "
                      f"{result.noise_multiplier:.4f} | {result.epsilon:.4f} | {seconds:.3f} |")


if __name__ == "__main__":
    main()
