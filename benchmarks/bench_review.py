"""Does reviewing the uncertain answers first pay, and are its intervals honest? A simulated judge of known noise.

Each trial makes N answers: a true verdict Y ~ Bernoulli(--base) (a reviewer's "correct" = 1), and a judge that sees
it through noise: its score is s = sigmoid(--signal x (2Y - 1) + --noise x ε), ε ~ N(0, 1), read on 0-1 as the web
app reads a judge (pass threshold 0.5). The judge's value is f = s. The uncertainty of an answer is the web app's
(`server/store/review.py`): 1 - 2 |s - 0.5|, 1 at the threshold, 0 for a sure verdict.

For the same number of labels n, two reviews label answers in two orders and both estimate the mean of Y with
`analysis.active_inference.active_mean` (λ power-tuned):

- **uncertain first**: weights `sampling_weights(uncertainty)`, the first n of `draw_order`, π from
  `inclusion_probabilities`, inverse-probability weights (what the review page does);
- **uniform**: every weight 1 (a uniform random subset; the estimator is then PPI++ over it).

Printed: each one's coverage of the 95% interval (the true mean of Y is the Bernoulli's --base: the intervals cover the
mean of the population the answers come from), its mean interval width, the bias, and the width ratio uncertain /
uniform. Seeded; numbers in docs/benchmarks.md.

    python benchmarks/bench_review.py                      # 4,000 trials of 1,000 answers, 100 labels
    python benchmarks/bench_review.py --labels 200 --trials 1000
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ragretrieval.analysis.active_inference import (
    active_mean,
    draw_order,
    inclusion_probabilities,
    sampling_weights,
)


def trial(rng, args) -> dict:
    y = (rng.random(args.answers) < args.base).astype(float)
    score = 1 / (1 + np.exp(-(args.signal * (2 * y - 1) + args.noise * rng.standard_normal(args.answers))))
    uncertainty = 1 - 2 * np.abs(score - 0.5)
    keys = rng.random(args.answers)
    out = {}
    for name, weights in (("uncertain first", sampling_weights(uncertainty)), ("uniform", np.ones(args.answers))):
        order = draw_order(weights, keys)
        labels = np.full(args.answers, np.nan)
        labels[order[:args.labels]] = y[order[:args.labels]]
        pi = inclusion_probabilities(weights, keys, args.labels)
        est = active_mean(score, labels, pi)
        out[name] = (est.mean, est.ci)
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--trials", type=int, default=4000)
    parser.add_argument("--base", type=float, default=0.7, help="share of answers a reviewer finds correct")
    parser.add_argument("--signal", type=float, default=2.5)
    parser.add_argument("--noise", type=float, default=1.5)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    found = {"uncertain first": [], "uniform": []}
    for _ in range(args.trials):
        for name, value in trial(rng, args).items():
            found[name].append(value)
    print(f"{args.trials} trials, {args.answers} answers, {args.labels} labels each; judge signal {args.signal}, "
          f"noise {args.noise}; true mean {args.base}")
    print(f"{'order':<16} {'coverage':>9} {'mean width':>11} {'bias':>9}")
    widths = {}
    for name, rows in found.items():
        means = np.array([m for m, _ in rows])
        lows, highs = np.array([c[0] for _, c in rows]), np.array([c[1] for _, c in rows])
        covered = np.mean((lows <= args.base) & (args.base <= highs))
        widths[name] = float(np.mean(highs - lows))
        print(f"{name:<16} {covered:>8.1%} {widths[name]:>11.4f} {means.mean() - args.base:>+9.4f}")
    print(f"width ratio, uncertain first / uniform: {widths['uncertain first'] / widths['uniform']:.3f} "
          f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
