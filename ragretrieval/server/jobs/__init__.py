"""Background execution of evaluations: the seam to the engine that answers and judges one question (engine.py),
claims on questions with heartbeats and takeover (claims.py), and the worker threads that run them (worker.py)."""
