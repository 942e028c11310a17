"""What journaltools hands to others: one run as one offline HTML page (``report``), and runs as OpenTelemetry
traces or ATIF trajectories (``interchange``)."""
