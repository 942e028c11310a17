"""Go's encodings and libraries as the runtime's Go code uses them: ``encoding/json`` (``json``, ``json_values``),
``time.Time`` (``time``) and ``regexp`` (``regexp``, on RE2). Shared by the three formats journaltools speaks (run
journals, task records, turn checkpoints); it knows none of them."""
