"""Evaluation: the pipeline (pipeline.py: `evaluate`), the report schema (report.py) and its text table (render.py).
Sweeps over a grid of configurations store their cells as runs, so they live in runs/sweep.py."""
