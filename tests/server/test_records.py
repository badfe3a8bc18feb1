"""A match record's JSON form is exactly dataclasses.asdict of it, as stored and replayed."""

import json
from dataclasses import asdict

from server.match.records import Fault, MatchRecord


def test_to_json_is_asdict_and_shares_nothing() -> None:
    record = MatchRecord(
        match_id="7",
        game="knaves",
        options={"target": 20, "nested": {"a": [1, 2]}},
        seed=5,
        seats=["a", "b", "c"],
        actions=["play:AS", "play:2C"],
        move_ms=[0.5, 1.25],
        faults=[Fault(1, "timeout", "no reply", 3, 1, "play:2C")],
        scores=[1, 2, 3],
        ranks=[3, 2, 1],
        forfeited=[False, True, False],
        status="finished",
        reason="",
    )
    out = record.to_json()
    assert out == asdict(record)
    assert list(out) == list(asdict(record))
    out["actions"].append("x")
    out["options"]["nested"]["a"].append(3)
    assert record.actions == ["play:AS", "play:2C"]
    assert record.options["nested"] == {"a": [1, 2]}
    # What the store keeps reads back as the record it was, through JSON text as a row is.
    record.code = ["d" * 64, None, None]
    assert MatchRecord.from_json(json.loads(json.dumps(record.to_json()))) == record
