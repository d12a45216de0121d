"""Other tools' and benchmarks' files, read into our question sets (and written back where the format allows):
agent-evaluation JSONL (agent_jsonl.py)."""
