"""Batch audits: every run of many sources to Arrow tables, findings and Parquet (``sources``), the two listing
rules side by side (``listings``), and the task records and turn checkpoints beside them (``tasks``, ``turns``)."""
