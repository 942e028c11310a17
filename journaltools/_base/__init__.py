"""Helpers that know no journal: durable files, source URLs, the blocking face over asyncio, text made safe for a
terminal or a page, operating-system errors in one line, and the collector paused for a bulk load."""
