"""One match in memory: the runner, the hub of sessions, clocks, records, limits, live matches."""
