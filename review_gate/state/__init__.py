"""Run state in SQLite: runs, run-owned review pairs (the cache), and acceptance events.

    store.py       the file: where it lives, opening it, schema and migrations
    runs.py        one row per run; abandoned runs; history and gc
    freshness.py   which (file, agent) pairs can be reused; pure, no SQLite
    pairs.py       recording pairs pending -> completed | missing | cached
    acceptance.py  accept / revoke events, and the waivers they give
    gaps.py        the gap log: each run's gaps, grouped by kind and subject
    debt.py        deferred debt: findings a passing gate let through, by fingerprint, until gone
"""
