"""Relevance judging: pooling the top chunks of runs and asking an LLM to grade them (pooling.py), and the
judgements file that `eval --judgements` scores chunks with (judgements.py)."""
