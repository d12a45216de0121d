"""The significance level of a paired test, declared below every room that runs one: `CompareSettings`
(analysis/settings.py) takes it as ``alpha``'s default for ``runs compare``, ``runs report``, the web app's compare
page and `ragretrieval.compare`, and the evaluation pipeline words an ANN run's test against exact search at it
(retrieval/exact.py). analysis/ reads evaluation reports, so the pipeline cannot import that room; both import this
one. A second literal level anywhere else fails tests/work/test_declared_once.py.
"""

from __future__ import annotations

ALPHA = 0.05  # a p-value under it is significant, unless a comparison is told another level
