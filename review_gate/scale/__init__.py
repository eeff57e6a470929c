"""The runs beyond one review: a repository's files swept as they are (``sweep_facts``), a run
split into shards over a CI matrix (``shards``) and their reports merged (``merge_reports``),
replay bundles that decide again without the agents (``bundles``), and runs sent to the
providers' batch APIs (``batch``)."""
