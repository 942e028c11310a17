"""Go's encodings as the runtime's Go code writes and reads them: ``encoding/json`` (``json``) and ``time.Time``
(``time``). Shared by the three formats journaltools speaks (run journals, task records, turn checkpoints); it
knows none of them."""
