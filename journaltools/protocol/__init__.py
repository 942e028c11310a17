"""The wire contract: records, CheckAppend, run ids, fingerprints and finding codes. No I/O."""
