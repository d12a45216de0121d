"""The Python face: what ``import ragretrieval as rr`` offers (docs/python.md). Each function is a thin layer over
the same code the command line runs, taking plain values, files or pandas DataFrames:

- runs.py: `evaluate` (retrieval, ``ragretrieval eval``) and `answer` (answers, ``ragretrieval answer``), their
  settings given as keyword arguments or ``config=``, stored in the runs history only when asked;
- scoring.py: `score` (``ragretrieval score``) on dicts, TREC files or DataFrames;
- reports.py: `load_dataset`, `load_run` and `compare` (``ragretrieval compare``);
- `build_dataset` is data/build.py's (``ragretrieval build-dataset``).

The package root imports these lazily (its module ``__getattr__``), so ``import ragretrieval`` stays fast.
"""
