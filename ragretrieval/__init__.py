"""ragretrieval: measure how well RAG retrieval works, with numbers that agree with trec_eval."""

__version__ = "0.1.0"
