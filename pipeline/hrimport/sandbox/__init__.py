"""The sandbox: a local implementation of the platform's five endpoints (FastAPI + SQLite)."""
