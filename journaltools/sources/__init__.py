"""Where journals live, by URL: a directory of files (``file``), a JetStream stream (``jetstream``), a throwaway or
directory-backed local server (``embedded``), and the two listing rules the runtime applies to them (``listing``).
Sources move bytes; ``base.Backend`` is the contract and ``registry.open_source`` opens one by URL."""
