"""Traces from production, read into agent-evaluation records: MLflow traces (mlflow.py) and OpenTelemetry spans
with OpenInference attributes as OTLP JSON (otlp.py); spans.py says what is taken from a trace and how."""
